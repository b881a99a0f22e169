"""Profile one `scoregate run` of the bench's W1 work and say where its CPU goes, per phase and per function.

Usage (from the repo root):  .venv/bin/python bench/profile_scoregate.py [--n 2000] [--port 18000] [--py-spy PATH]
With py-spy (installed apart, e.g. `python3 -m venv /tmp/pyspy && /tmp/pyspy/bin/pip install py-spy`) every
thread is sampled, startup and summary included; without it the run goes through `python -m cProfile`.
"""

from __future__ import annotations

import argparse
import io
import os
import pstats
import re
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

from harnesses import BenchSetup, run_scoregate
from mock_endpoint import INSTALL_HINT, PORTS, MockEndpoint, missing_packages
from scoregate_project import generate_kit_data, write_project

REPO = Path(__file__).resolve().parents[1]
RATE_HZ = 250
PHASES = (
    ("items", "BaseEventLoop._run_once"),
    ("summary", "summarize_run"),
    ("imports", "_find_and_load"),
)
"""A sample belongs to the first phase whose marker frame is on its stack; anything else is 'other startup'."""
_LINE_NO = re.compile(r":\d+\)")


def _phase(frames: list[str]) -> str:
    for phase, marker in PHASES:
        if any(f.startswith(marker + " ") for f in frames):
            return phase
    return "other"


def folded_report(path: Path, n_items: int, top: int) -> str:
    """Return the per-phase split and the top functions of the items phase from py-spy's raw (folded) output."""
    by_phase: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        frames = [_LINE_NO.sub(")", f) for f in stack.split(";")]
        if frames and frames[-1].startswith("_worker (concurrent/futures/thread.py"):
            continue  # an idle thread-pool worker parked in queue.get (no Python frame below it)
        phase = _phase(frames)
        by_phase[phase] += count
        if phase == "items":
            for frame in set(frames):
                inclusive[frame] += count
            own[frames[-1]] += count
    total = sum(by_phase.values())
    items = by_phase["items"] or 1
    lines = [f"samples: {total} at {RATE_HZ} Hz = {total / RATE_HZ:.1f} CPU-s (idle thread-pool workers left out)"]
    for phase in ("imports", "other", "items", "summary"):
        seconds = by_phase[phase] / RATE_HZ
        lines.append(f"  {phase:8s} {seconds:6.2f} s  {by_phase[phase] / max(total, 1):6.1%}")
    lines.append(f"items phase: {by_phase['items'] / RATE_HZ * 1000 / n_items:.2f} CPU-ms per item")
    below_loop = [(f, c) for f, c in inclusive.most_common() if c < 0.99 * items]  # drop the frames on every stack
    lines.append(f"\ntop {top} functions of the items phase, inclusive (share of items-phase samples):")
    lines += [f"  {c / items:6.1%}  {f}" for f, c in below_loop[:top]]
    lines.append("\nscoregate's own functions in the items phase, inclusive:")
    lines += [f"  {c / items:6.1%}  {f}" for f, c in below_loop if "(scoregate/" in f]
    lines.append(f"\ntop {top // 2} functions of the items phase, self time:")
    lines += [f"  {c / items:6.1%}  {f}" for f, c in own.most_common(top // 2)]
    return "\n".join(lines) + "\n"


def cprofile_report(path: Path, top: int) -> str:
    """Return the top functions by own time and by cumulative time from a cProfile dump."""
    out = []
    for key in ("tottime", "cumulative"):
        stream = io.StringIO()
        pstats.Stats(str(path), stream=stream).sort_stats(key).print_stats(top)
        out.append(f"--- sorted by {key}\n{stream.getvalue()}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Profile one run and write the report to --out; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--port", type=int, default=18000, choices=sorted(PORTS), help="18000 (0 ms) shows CPU best")
    parser.add_argument("--py-spy", type=Path, default=None, help="py-spy binary (default: on PATH, else cProfile)")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "profile-scoregate.txt")
    args = parser.parse_args(argv)
    if missing := missing_packages():
        print(f"error: the mock endpoint needs {', '.join(missing)}; install with:\n  {INSTALL_HINT}", file=sys.stderr)
        return 2
    kit = Path(os.environ.get("BENCH_KIT", str(REPO / ".." / "shared" / "bench"))).resolve()
    spy = args.py_spy or (Path(found) if (found := shutil.which("py-spy")) else None)
    python, scoregate = REPO / ".venv" / "bin" / "python", REPO / ".venv" / "bin" / "scoregate"
    workdir = Path(tempfile.mkdtemp(prefix="scoregate-profile-"))
    (workdir / "logs").mkdir()
    try:
        kit_data = generate_kit_data(kit, args.n, workdir / "kit-data.jsonl")
        project = write_project(
            workdir / "project", kit=kit, kit_data=kit_data, n=args.n, port=args.port, concurrency=args.concurrency
        )
        profile = workdir / ("profile.folded" if spy else "profile.prof")
        wrapper = (
            [str(spy), "record", "-r", str(RATE_HZ), "-f", "raw", "-o", str(profile), "--"]
            if spy
            else [str(python), "-m", "cProfile", "-o", str(profile)]
        )
        setup = BenchSetup(python, scoregate, kit, workdir, kit_data, args.n, args.concurrency, args.port, project)
        with MockEndpoint(kit, workdir / "mock"):
            measurement, _ = run_scoregate(_wrapped(setup, wrapper), 0)
        head = (
            f"scoregate run, {args.n} items, concurrency {args.concurrency}, port {args.port} "
            f"({int(PORTS[args.port] * 1000)} ms), profiled with {'py-spy' if spy else 'cProfile'} "
            f"(the profiler slows it): {measurement.items_per_s:.1f} items/s in the items phase, "
            f"startup {measurement.detail['startup_s']:.1f} s, "
            f"after items {measurement.detail['after_items_s']:.1f} s\n"
        )
        body = folded_report(profile, args.n, args.top) if spy else cprofile_report(profile, args.top)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(head + body, encoding="utf-8")
    print(head + body)
    return 0


def _wrapped(setup: BenchSetup, wrapper: list[str]) -> BenchSetup:
    """Return `setup` whose scoregate command runs under `wrapper` (a profiler taking the command after it)."""
    script = setup.workdir / "profiled-scoregate"
    quoted = " ".join(f"'{part}'" for part in wrapper)
    script.write_text(f'#!/bin/sh\nexec {quoted} "{setup.scoregate}" "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return replace(setup, scoregate=script)


if __name__ == "__main__":
    sys.exit(main())
