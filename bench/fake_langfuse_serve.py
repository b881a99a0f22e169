"""Serve the tests' Langfuse test double (tests/support/fake_langfuse) standalone for benches: one line of env JSON,
then serve.

Usage (from the repo root):  .venv/bin/python bench/fake_langfuse_serve.py
It prints `FAKE_LANGFUSE {"LANGFUSE_PUBLIC_KEY": ..., "LANGFUSE_HOST": ...}` once it listens, and serves until
killed. The double keeps every request in a list for tests to read; here that log is emptied every second so
a 100,000-item mirror does not fill the bench machine's memory (the stored traces, items and scores stay).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.fake_langfuse import FakeLangfuse


def main() -> None:
    """Start the double, print where it listens, and serve until SIGTERM or SIGINT."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with FakeLangfuse() as fake:
        print("FAKE_LANGFUSE " + json.dumps(fake.env()), flush=True)
        while not stop.wait(1.0):
            with fake._lock:
                fake.requests.clear()
    print("FAKE_LANGFUSE stopped", flush=True)


if __name__ == "__main__":
    main()
