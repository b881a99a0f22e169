"""MLflow's UI shows scoregate's runs, not an empty GenAI overview: `runs show` links to the experiment's Runs tab
(checked in MLflow's own UI in a browser), and the experiments declare the "Machine learning" kind on a real
sqlite store (new ones, ones made by an older scoregate; a kind the user chose is kept)."""

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
from mlflow.tracking import MlflowClient

from support.headless_chromium import Chromium, find_chromium
from support.projects import CliResult, Runs

pytestmark = pytest.mark.usefixtures("mlflow_store")

KIND = "mlflow.experimentKind"


def client() -> MlflowClient:
    return MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])


def kind_of(name: str) -> str | None:
    experiment = client().get_experiment_by_name(name)
    assert experiment is not None, name
    return experiment.tags.get(KIND)


def test_a_new_experiment_and_the_comparisons_one_declare_the_machine_learning_kind(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    assert scoregate("run", "counters").code == 0
    assert scoregate("run", "counters").code == 0
    a, b = runs.ids()

    compared = scoregate("compare", a, b)

    assert compared.code == 0, compared.output
    # the kind MLflow 3 UIs without the GenAI / Model training switch open on the Runs tab (sinks/mlflow/experiments.py)
    assert kind_of("counters (scripted-project)") == "custom_model_development"
    assert kind_of("comparisons (scripted-project)") == "custom_model_development"


def test_an_experiment_made_before_gets_the_kind_and_a_users_choice_is_kept(
    scoregate: Callable[..., CliResult],
) -> None:
    mlflow = client()
    mlflow.create_experiment("scripted-project/counters")  # as scoregate made (and named) it before: no kind
    mlflow.create_experiment("smoke (scripted-project)", tags={KIND: "genai_development"})  # chosen in the UI

    assert scoregate("run", "counters").code == 0
    assert scoregate("run", "smoke").code == 0

    assert kind_of("counters (scripted-project)") == "custom_model_development"  # renamed, then given the kind
    assert kind_of("smoke (scripted-project)") == "genai_development"


def test_runs_show_links_to_the_runs_tab_of_the_experiment(
    scoregate: Callable[..., CliResult], runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLFLOW_PORT", "5123")
    assert scoregate("run", "counters").code == 0
    experiment = client().get_experiment_by_name("counters (scripted-project)")
    assert experiment is not None

    shown = scoregate("runs", "show", runs.latest())

    assert shown.code == 0, shown.output
    link = f"http://127.0.0.1:5123/#/experiments/{experiment.experiment_id}/runs?workflowType=machine_learning"
    assert f"mlflow: the experiment's runs in the UI: {link}" in shown.output


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
