"""MLflow's UI shows scoregate's runs, not an empty GenAI overview: the link `runs show` prints opens MLflow's own
UI (a real `mlflow server`) in headless Chromium on the experiment's Runs tab."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator

import pytest

from support.headless_chromium import Chromium, find_chromium
from support.projects import CliResult, Runs

pytestmark = pytest.mark.usefixtures("mlflow_store")


@pytest.mark.skipif(find_chromium() is None, reason="no chromium installed (apt-get install chromium)")
def test_the_link_opens_mlflows_own_ui_on_the_runs_not_the_genai_overview(
    scoregate: Callable[..., CliResult], runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    monkeypatch.setenv("MLFLOW_PORT", str(port))
    assert scoregate("run", "counters").code == 0
    run_id = runs.latest()
    link = re.search(r"runs in the UI: (\S+)", scoregate("runs", "show", run_id).output)
    assert link is not None
    experiment = link.group(1).split("#/experiments/")[1].split("/")[0]

    with mlflow_ui(port), Chromium(str(find_chromium())) as browser:
        plain = settled(browser, f"http://127.0.0.1:{port}/#/experiments/{experiment}")
        linked = settled(browser, link.group(1))
        listed = wait_for_text(browser, run_id)

    assert "/overview" in plain  # what the issue saw: MLflow's default view of an experiment
    assert f"#/experiments/{experiment}/runs?" in linked and "workflowType=machine_learning" in linked
    assert run_id in listed  # the run's name starts with its scoregate run id


@contextlib.contextmanager
def mlflow_ui(port: int) -> Iterator[None]:
    """MLflow's own server and UI over this test's store, on 127.0.0.1:`port`."""
    command = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", os.environ["MLFLOW_TRACKING_URI"],
               "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "mlflow server did not start"
                time.sleep(0.3)
        yield
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def settled(browser: Chromium, url: str, timeout: float = 90) -> str:
    """Open `url` in a fresh page load and return the address once the UI stopped redirecting (2 s unchanged)."""
    browser.call("Page.navigate", url="about:blank")
    browser.call("Page.navigate", url=url)
    deadline, last, since = time.monotonic() + timeout, "", time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = str(browser.evaluate("location.href"))
        if now != last:
            last, since = now, time.monotonic()
        elif now != url and time.monotonic() - since >= 2:
            return now
    raise AssertionError(f"{url} kept changing until {last}")


def wait_for_text(browser: Chromium, text: str, timeout: float = 60) -> str:
    """The page's text once it holds `text` (or at the deadline)."""
    deadline = time.monotonic() + timeout
    page = ""
    while time.monotonic() < deadline:
        page = str(browser.evaluate("document.body.innerText"))
        if text in page:
            break
        time.sleep(0.25)
    return page
