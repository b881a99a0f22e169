"""What a Langfuse mirror prints says what was done: the form the scores really went in (after a server refused an
array whatever its version said), and a refused mirror's problem once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.app.run.experiment import RunOptions, run_experiment
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.langfuse_sync import sync_run
from support.projects import CliResult


@pytest.fixture
def langfuse_on(fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the Langfuse variables at the fake."""
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)


def test_after_the_switch_the_server_line_says_the_scores_went_as_events(
    project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = run_experiment(
        project_dir, "counters", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    ).run_id
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)
    fake_langfuse.server_mode = "old"  # refuses an array of scores...
    fake_langfuse.server_version = "4.60.0"  # ...though its version says it takes one (a proxy, a patched build)

    report = sync_run(project_dir, run_id)

    assert report.switched and report.complete
    (line,) = [line for line in report.lines() if line.startswith("  server ")]
    assert line.startswith("  server 4.60.0: scores posted as score-create events"), line
    assert "batches" not in line and "refused" in line


def test_a_server_that_takes_arrays_says_batches(
    project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = run_experiment(
        project_dir, "counters", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    ).run_id
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)
    fake_langfuse.server_mode = "new"

    report = sync_run(project_dir, run_id)

    assert not report.switched
    assert "  server 4.59.0: scores posted as batches" in report.lines(), report.lines()


def test_a_refused_mirror_in_a_run_prints_its_problem_once(
    scoregate: Callable[..., CliResult], fake_langfuse: FakeLangfuse, langfuse_on: None
) -> None:
    fake_langfuse.fail_next(
        "/api/public/scores" if fake_langfuse.server_mode == "new" else "/api/public/ingestion", status=400, times=99
    )

    refused = scoregate("run", "counters", "--prompt-source", "local", "--no-mlflow")

    assert refused.code == 5, refused.output
    words = " ".join(refused.output.split())
    assert words.count("scores were rejected: HTTP 400: injected failure 400") == 1, refused.output
    assert "langfuse mirror failed: " in words and "fix what the server names above" in words
    assert "items: 0/6 mirrored (6 traces sent now)" in words and "sent, 0 accepted" in words  # its other lines stay
