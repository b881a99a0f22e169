"""What a Langfuse mirror prints says what was done: the form the scores really went in (after a server refused an
array whatever its version said), and a refused mirror's problem once."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from langfuse_sync import sync_run
from scoregate.app.experiment import RunOptions, run_experiment


@pytest.fixture
def langfuse_on(fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the Langfuse variables at the fake."""
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)


def test_after_the_switch_the_server_line_says_the_scores_went_as_events(
    project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = run_experiment(project_dir, "counters", RunOptions(mirror_mlflow=False, mirror_langfuse=False)).run_id
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
    run_id = run_experiment(project_dir, "counters", RunOptions(mirror_mlflow=False, mirror_langfuse=False)).run_id
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)
    fake_langfuse.server_mode = "new"

    report = sync_run(project_dir, run_id)

    assert not report.switched
    assert "  server 4.59.0: scores posted as batches" in report.lines(), report.lines()
