"""`scores pull` keeps the live judges' scores of a run's traces with the evaluator version that wrote each."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scoregate.app.annotation import mirrored_traces
from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.sinks.langfuse.experiment_mirror import mirror_run_to_langfuse
from scoregate.store.run_store import RunStore
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse
from support.fake_langfuse.rule_runner import run_rules
from support.langfuse_env import point_at
from support.projects import CliResult

Cli = Callable[..., CliResult]


@pytest.fixture
def fake(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangfuse]:
    with FakeLangfuse(server_mode="new") as server:
        point_at(monkeypatch, server)
        yield server


@pytest.fixture
def mirrored(project_dir: Path, fake: FakeLangfuse) -> RunStore:
    """A counters run of smoke_v1 (6 items), mirrored to the fake."""
    local = RunOptions(
        prompts=RunOptions.PromptSource(source="local"),
        mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})),
    )
    store = run_experiment(project_dir, "counters", local).store
    assert mirror_run_to_langfuse(store, load_project(project_dir)).complete
    return store


def live_judge_scores_the_run(fake: FakeLangfuse, store: RunStore, version_of: dict[str, int]) -> str:
    """A server-side judge at version 2 scores the run's item traces (as a rule on experiment items would)."""
    evals = fake.state.evals
    body = {
        "name": "faithfulness_score",
        "type": "llm_as_judge",
        "prompt": "Grade {{summary}}.",
        "outputDefinition": {"dataType": "NUMERIC", "minValue": 1, "maxValue": 5},
    }
    evaluator = evals.create(body)
    evals.patch(evaluator["id"], body)
    evals.create_rule({"name": "items", "enabled": True, "evaluatorAssignments": [{"evaluatorId": evaluator["id"]}]})
    traces = set(mirrored_traces(store).values())
    run_rules(fake.state, [s for s in fake.state.spans if s["traceId"] in traces and s["parentSpanId"] is None])
    version_of.update({v["id"]: v["version"] for v in evals.versions[evaluator["id"]]})
    return str(evals.latest(evaluator["id"])["id"])


def test_scores_pull_keeps_each_live_score_with_its_evaluator_version(
    scoregate: Cli, fake: FakeLangfuse, mirrored: RunStore, project_dir: Path
) -> None:
    versions: dict[str, int] = {}
    version = live_judge_scores_the_run(fake, mirrored, versions)

    pulled = scoregate("scores", "pull", mirrored.run_id)
    again = scoregate("scores", "pull", mirrored.run_id)

    assert pulled.code == 0, pulled.output
    kept = [json.loads(line) for line in (project_dir / "feedback" / "live_judges.jsonl").read_text().splitlines()]
    assert len(kept) == 6 and {r["evaluator_version_id"] for r in kept} == {version} and versions[version] == 2
    assert {r["trace_id"] for r in kept} == set(mirrored_traces(mirrored).values())
    assert {r["run_id"] for r in kept} == {mirrored.run_id}
    assert "live judges' scores: 6 new, 0 already" in pulled.output
    assert f"faithfulness_score @ {version} ×6" in pulled.output
    assert "live judges' scores: 0 new, 6 already" in again.output


def test_without_live_judges_scores_pull_prints_what_it_printed_before(
    scoregate: Cli, fake: FakeLangfuse, mirrored: RunStore, project_dir: Path
) -> None:
    pulled = scoregate("scores", "pull", mirrored.run_id)

    assert pulled.code == 0 and "live judges" not in pulled.output
    assert not (project_dir / "feedback" / "live_judges.jsonl").exists()
