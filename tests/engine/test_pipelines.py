"""Multi-stage pipelines: fixture and live modes, stage evaluators, per-stage telemetry, latency and cost."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.sinks.mlflow.readable import readable_metrics
from scoregate.store.record import RunSummary
from support.projects import REPO, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

FACTS_ASK = "List the episode's main facts"
SUMMARY_ASK = "Write a summary of at most 80 words"
EXPERIMENT = {
    "dataset": "facts_v1",
    "stages": [
        {"name": "facts", "prompt": "facts-extract", "evaluators": ["facts_checks_v1"]},
        {"name": "summary", "prompt": "summary-from-facts"},
    ],
    "evaluators": ["summary_checks_v1"],
}


@pytest.fixture
def pipeline_project(project_dir: Path, edit_yaml: Callable[..., None]) -> Path:
    """The test project with the shipped facts_v1 dataset and the two-stage experiment in both modes."""
    for suffix in ("jsonl", "yaml"):
        shutil.copy(REPO / "datasets" / f"facts_v1.{suffix}", project_dir / "datasets" / f"facts_v1.{suffix}")

    def add(config: dict[str, Any]) -> None:
        config["models"]["scripted"].update(input_cost_per_mtok=1.0, output_cost_per_mtok=2.0)
        config["experiments"]["facts_fixture"] = {**EXPERIMENT, "stage_inputs": "fixture"}
        config["experiments"]["facts_live"] = {**EXPERIMENT, "stage_inputs": "live", "concurrency": 1}

    edit_yaml(project_dir / "scoregate.yaml", add)
    return project_dir


def items(project: Path) -> dict[str, dict[str, Any]]:
    lines = (project / "datasets" / "facts_v1.jsonl").read_text(encoding="utf-8").splitlines()
    return {item["id"]: item for item in map(json.loads, lines)}


def asked(server: ScriptedOpenAI, marker: str) -> list[str]:
    return [r.text for r in server.chat_requests() if marker in r.text]


def test_fixture_mode_feeds_each_stage_the_dataset_input_and_scores_every_stage(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs, pipeline_project: Path
) -> None:
    result = scoregate("run", "facts_fixture", "--no-mlflow")

    assert result.code == 0, result.output
    dataset = items(pipeline_project)
    summary_requests = asked(scripted_server, SUMMARY_ASK)
    assert len(asked(scripted_server, FACTS_ASK)) == len(summary_requests) == 3
    for item in dataset.values():  # the summary stage read the fixture facts, not stage 1's reply
        assert any(item["input"]["facts"] in text for text in summary_requests)
    stored = runs.results()
    for record in stored:
        assert [c["purpose"] for c in record["calls"]] == ["stage:facts", "task"]
        assert record["stages"]["facts"]["output"] and record["stages"]["facts"]["error"] is None
        assert record["stages"]["facts"]["prompt"].startswith("facts-extract@local-")
        assert record["input"] == dataset[record["item_id"]]["input"]
        names = {s["name"]: s["value"] for s in record["scores"]}
        assert names["facts.list_word_count"] > 0 and 0 <= names["facts.reference_similarity"] <= 1
        assert names["summary_word_count"] > 0 and names["facts_similarity"] is not None
    summary = runs.summary()
    keys = {"facts.list_word_count", "facts.reference_similarity", "summary_word_count", "summary_compression_ratio"}
    assert keys <= set(summary["scores"])
    facts, last = summary["stages"]["facts"], summary["stages"]["summary"]
    assert (facts["calls"], last["calls"], facts["failed_calls"]) == (3, 3, 0)
    assert facts["latency_mean_ms"] > 0 and facts["cost_usd_total"] > 0 and last["tokens_out_total"] > 0
    assert readable_metrics(RunSummary.model_validate(summary))["stage_facts_calls"] == 3.0
    progress = json.loads((runs.root / runs.latest() / "progress.json").read_text())
    assert progress["stages"]["facts"]["calls"] == progress["stages"]["summary"]["calls"] == 3
    manifest = runs.manifest()
    assert manifest["receipts"]["pipeline_mode"] == "fixture"
    assert list(manifest["receipts"]["stages"]) == ["facts", "summary"]
    rows = json.loads((runs.root / runs.latest() / "metrics.json").read_text())["rows"]
    assert [r["stage"] for r in rows[:1]] == ["model_check"]  # the run's one-token check, then the items' calls
    rows = rows[1:]
    assert sorted({r["stage"] for r in rows}) == ["facts", "summary"]
    assert {r["prompt"].split("@")[0] for r in rows} == {"facts-extract", "summary-from-facts"}


def test_live_mode_chains_the_stages(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs, pipeline_project: Path
) -> None:
    replies = iter(f"- fact number {n} of this episode" for n in range(100))
    scripted_server.responder = lambda body: next(replies)

    result = scoregate("run", "facts_live", "--no-mlflow")

    assert result.code == 0, result.output
    fixture_facts = [item["input"]["facts"] for item in items(pipeline_project).values()]
    for record in runs.results():
        facts_output = record["stages"]["facts"]["output"]
        (request,) = [t for t in asked(scripted_server, SUMMARY_ASK) if facts_output in t]  # stage 1's reply
        assert not any(fixture in request for fixture in fixture_facts)
    assert runs.manifest()["receipts"]["pipeline_mode"] == "live"


def test_live_mode_stops_an_item_whose_earlier_stage_failed_with_the_reason(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs, pipeline_project: Path
) -> None:
    scripted_server.fail_next(400, body='{"error": {"message": "no", "type": "invalid"}}')

    assert scoregate("run", "facts_live", "--no-mlflow", "--limit", "1").code == 1  # no item succeeded

    (record,) = runs.results()
    assert record["error"].startswith("stage facts failed: model call failed") and record["output"] is None
    assert [c["purpose"] for c in record["calls"]] == ["stage:facts"]  # the summary stage was not called
    assert all(s["value"] is None for s in record["scores"])
    assert any("stage facts failed" in s["reason"] for s in record["scores"] if s["name"] == "summary_word_count")
    assert runs.summary()["stages"]["facts"]["item_errors"] == 1


def test_fixture_mode_runs_later_stages_even_when_an_earlier_one_failed(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs, pipeline_project: Path
) -> None:
    scripted_server.fail_next(400, body='{"error": {"message": "no", "type": "invalid"}}')

    assert scoregate("run", "facts_fixture", "--no-mlflow", "--limit", "1", "--concurrency", "1").code == 0

    (record,) = runs.results()
    assert record["error"] is None and record["output"]
    assert "HTTP 400" in record["stages"]["facts"]["error"]
    scores = {s["name"]: s for s in record["scores"]}
    facts_words = scores["facts.list_word_count"]
    assert facts_words["value"] is None and "stage facts" in facts_words["reason"]
    assert scores["summary_word_count"]["value"] > 0


def test_a_fixture_item_without_the_earlier_stage_input_is_refused_before_any_call(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, pipeline_project: Path
) -> None:
    path = pipeline_project / "datasets" / "facts_v1.jsonl"
    first, *rest = path.read_text(encoding="utf-8").splitlines()
    item = json.loads(first)
    del item["input"]["facts"]
    path.write_text("\n".join([json.dumps(item), *rest]) + "\n", encoding="utf-8")
    (pipeline_project / "datasets" / "facts_v1.yaml").unlink()  # its input_schema would say so first

    fixture = scoregate("run", "facts_fixture", "--no-mlflow")
    live = scoregate("run", "facts_live", "--no-mlflow", "--limit", "1")

    assert fixture.code == 1
    assert "prompt 'summary-from-facts' uses {{facts}} but the item's input has no `facts`" in fixture.output
    assert "stage_inputs: fixture reads earlier stages' outputs from the item" in fixture.output
    assert live.code == 0  # live mode fills {{facts}} from the facts stage
    assert len(asked(scripted_server, SUMMARY_ASK)) == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: e["stages"].pop(), "a pipeline needs at least two `stages:`"),
        (lambda e: e["stages"][0].update(prompt="nope"), "stages[0] (facts).prompt: no prompt 'nope'"),
        (lambda e: e["stages"][0].update(evaluators=["nope"]), "stages[0] (facts).evaluators: no evaluator 'nope'"),
        (lambda e: e["stages"][1].update(model="scripted"), "the last stage runs on the experiment's `model:`"),
        (lambda e: e.update(prompt="summarization-howto"), "with `stages:`, leave out `prompt:`"),
    ],
)
def test_a_broken_pipeline_gets_a_clear_error(
    scoregate: Callable[..., CliResult],
    pipeline_project: Path,
    edit_yaml: Callable[..., None],
    change: Callable[[dict[str, Any]], None],
    message: str,
) -> None:
    edit_yaml(pipeline_project / "scoregate.yaml", lambda config: change(config["experiments"]["facts_fixture"]))

    result = scoregate("run", "facts_fixture", "--no-mlflow")

    assert result.code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_gate_may_name_a_stage_score(
    scoregate: Callable[..., CliResult], runs: Runs, pipeline_project: Path, edit_yaml: Callable[..., None]
) -> None:
    def gate(config: dict[str, Any]) -> None:
        spec = {"name": "facts_long_enough", "metric": "facts.list_word_count", "op": ">=", "threshold": 1}
        config["gates"].append(spec)
        config["experiments"]["facts_fixture"]["gates"] = ["facts_long_enough"]

    edit_yaml(pipeline_project / "scoregate.yaml", gate)

    assert scoregate("run", "facts_fixture", "--no-mlflow").code == 0

    (verdict,) = runs.summary()["gates"]
    assert (verdict["name"], verdict["status"]) == ("facts_long_enough", "pass")
