"""The same stored results give the same summary, whatever order the concurrent items finished in."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.app.run.summary import summarize_run
from scoregate.catalog.plan import plan_experiment
from scoregate.store.run_store import RunStore
from scoregate.tracks.project import load_project
from support.projects import CliResult, Runs


@pytest.fixture
def project_dir(canned_project_dir: Path) -> Path:
    """These runs need only canned replies: the project's model is `provider: scripted`, no server."""
    return canned_project_dir


def test_a_run_summarised_from_its_results_in_another_order_is_the_same(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs
) -> None:
    assert scoregate("run", "smoke", "--no-mlflow", "--no-langfuse").code == 0
    run_id = runs.latest()
    original = project_dir / "runs" / run_id
    shuffled = project_dir / "runs" / f"{run_id}-shuffled"
    shutil.copytree(original, shuffled)
    lines = (original / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    reordered = list(reversed(lines))
    random.Random(7).shuffle(reordered)
    assert reordered != lines
    (shuffled / "results.jsonl").write_text("".join(reordered), encoding="utf-8")

    project = load_project(project_dir)
    plan = plan_experiment(project, "smoke")
    first = summarize_run(RunStore.open(project_dir / "runs", run_id), plan, project)
    second = summarize_run(RunStore.open(project_dir / "runs", shuffled.name), plan, project)

    first.pop("run_id", None), second.pop("run_id", None)
    # The flaky block names the runs it read, the summarised run among them under its own id; its items must agree.
    assert first["flaky"]["items"] == second["flaky"]["items"]
    first["flaky"].pop("run_ids"), second["flaky"].pop("run_ids")
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    cis = [s["ci_low"] for s in first["scores"].values() if s.get("ci_low") is not None]
    assert cis, "the comparison covers bootstrap intervals"
