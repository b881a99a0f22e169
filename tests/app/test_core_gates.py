"""Gates, composites and judge replies as a user sees them: verdicts, exit codes, nulls with reasons, coverage."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.gates import evaluate_gate, overall_verdict
from scoregate.analysis.stats import describe
from scoregate.catalog.config_models import GateSpec
from scoregate.errors import ExitCode
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, json_for_schema, request_schema

FIRST_TITLE = "Open Models Weekly"  # smoke-001's title; the scripted summary repeats it, so judges see it
SECOND_TITLE = "Founders Digest"  # smoke-002
THIRD_TITLE = "Security Sync"  # smoke-003


def judge_replies(
    server: ScriptedOpenAI, rubric: str, reply: Callable[[dict[str, Any]], str], *, titles: tuple[str, ...] = ()
) -> None:
    """Make the judge whose prompt says `Grade the <rubric>` answer with `reply` (only for items with `titles`)."""

    def responder(body: dict[str, Any]) -> str:
        text = "\n".join(str(m["content"]) for m in body["messages"])
        if f"Grade the {rubric}" in text and (not titles or any(t in text for t in titles)):
            return reply(body)
        return server.default_reply(body)

    server.responder = responder


def gate(summary: dict[str, Any], name: str) -> dict[str, Any]:
    """The gate result called `name` in a summary."""
    return next(g for g in summary["gates"] if g["name"] == name)


def scores_of(results: list[dict[str, Any]], item_id: str) -> dict[str, dict[str, Any]]:
    """One item's scores by name."""
    item = next(r for r in results if r["item_id"] == item_id)
    return {s["name"]: s for s in item["scores"]}


def test_all_gates_pass_and_fail_on_gates_exits_zero(scoregate: Callable[..., CliResult], runs: Runs) -> None:
    result = scoregate("run", "smoke", "--no-mlflow", "--fail-on-gates")

    assert result.code == 0
    assert "verdict: PASS" in result.output
    summary = runs.summary()
    assert summary["verdict"] == "pass"
    assert {g["status"] for g in summary["gates"]} == {"pass"}
    assert summary["scores"]["WeightedQuality"]["mean"] == 5.0


def test_failing_gate_exits_3_with_fail_on_gates(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.judge_score = 1

    result = scoregate("run", "smoke", "--no-mlflow", "--fail-on-gates")

    assert result.code == ExitCode.GATES_FAILED
    assert "verdict: FAIL" in result.output
    faithfulness = gate(runs.summary(), "faithfulness")
    assert (faithfulness["status"], faithfulness["observed"]) == ("fail", 1.0)


def test_failing_gate_without_the_flag_still_exits_zero(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI
) -> None:
    scripted_server.judge_score = 1

    result = scoregate("run", "smoke", "--no-mlflow")

    assert result.code == 0
    assert "verdict: FAIL" in result.output


def test_metric_never_measured_makes_its_gates_incomplete_not_passed(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    judge_replies(scripted_server, "FAITHFULNESS", lambda _body: "Looks faithful to me, maybe a 4.")

    result = scoregate("run", "smoke", "--no-mlflow", "--fail-on-gates")

    assert result.code == ExitCode.GATES_FAILED
    summary = runs.summary()
    assert summary["verdict"] == "incomplete"
    for name in ("faithfulness", "hallucinations_per_summary"):
        assert gate(summary, name)["status"] == "incomplete"
        assert "no measured value" in gate(summary, name)["detail"]
    stats = summary["scores"]["faithfulness_score"]
    assert (stats["n_measured"], stats["coverage"], stats["mean"]) == (0, 0.0, None)
    assert any("not JSON" in reason for reason in stats["null_reasons"])
    assert gate(summary, "conciseness")["status"] == "pass"
    assert "INCOMPLETE" in result.output


def test_out_of_range_judge_reply_is_null_with_reason_and_lowers_coverage_below_the_floor(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    judge_replies(
        scripted_server,
        "FAITHFULNESS",
        lambda body: json.dumps(json_for_schema(request_schema(body) or {}, score=9)),
        titles=(FIRST_TITLE, SECOND_TITLE),
    )

    result = scoregate("run", "smoke", "--no-mlflow", "--fail-on-gates")

    assert result.code == ExitCode.GATES_FAILED
    score = scores_of(runs.results(), "smoke-001")["faithfulness_score"]
    assert score["value"] is None
    assert "outside 1-5" in score["reason"]
    stats = runs.summary()["scores"]["faithfulness_score"]
    assert (stats["n_measured"], stats["n_total"]) == (4, 6)
    assert abs(stats["coverage"] - 4 / 6) < 1e-9
    assert stats["mean"] == 5.0  # the two unmeasured items are not counted as 0 (or clamped to 5)
    faithfulness = gate(runs.summary(), "faithfulness")
    assert faithfulness["status"] == "incomplete"
    assert "below the floor" in faithfulness["detail"]


def test_every_item_gate_fails_on_one_bad_item_even_when_the_mean_is_fine(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    judge_replies(
        scripted_server,
        "FAITHFULNESS",
        lambda body: json.dumps(json_for_schema(request_schema(body) or {}, count=3)),
        titles=(FIRST_TITLE,),
    )

    scoregate("run", "smoke", "--no-mlflow")

    summary = runs.summary()
    assert summary["scores"]["hallucination_count"]["mean"] == 0.5  # a mean gate `<= 1` would pass
    every = gate(summary, "hallucinations_per_summary")
    assert (every["status"], every["observed"]) == ("fail", 3.0)
    assert every["detail"].startswith("1 of 6 items")
    assert summary["verdict"] == "fail"


def test_composite_is_null_when_a_part_is_null_never_zero(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    judge_replies(scripted_server, "CONCISENESS", lambda _body: "", titles=(FIRST_TITLE,))

    scoregate("run", "smoke", "--no-mlflow")

    scores = scores_of(runs.results(), "smoke-001")
    assert scores["conciseness_score"]["value"] is None
    assert scores["conciseness_score"]["reason"] == "judge reply is empty"
    composite = scores["WeightedQuality"]
    assert composite["value"] is None
    assert composite["reason"] == "missing parts: conciseness_score"
    assert scores_of(runs.results(), "smoke-002")["WeightedQuality"]["value"] == 5.0
    stats = runs.summary()["scores"]["WeightedQuality"]
    assert (stats["n_measured"], stats["mean"], stats["min"]) == (5, 5.0, 5.0)
    assert stats["null_reasons"] == {"missing parts: conciseness_score": 1}


def test_every_item_gate_below_the_coverage_floor_fails_once_a_measured_item_breaks_it(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs, project_dir: Path
) -> None:
    from mlflow.tracking import MlflowClient

    from scoregate.sinks.langfuse.score_mapping import run_scores
    from scoregate.sinks.mlflow.client import tracking_uri
    from scoregate.store.record import RunSummary

    def responder(body: dict[str, Any]) -> str:
        text = "\n".join(str(m["content"]) for m in body["messages"])
        if "Grade the FAITHFULNESS" not in text:
            return scripted_server.default_reply(body)
        if FIRST_TITLE in text or SECOND_TITLE in text:
            return "Looks faithful to me, maybe a 4."  # not JSON: both scores of the item stay unmeasured
        return json.dumps(json_for_schema(request_schema(body) or {}, count=3 if THIRD_TITLE in text else 0))

    scripted_server.responder = responder

    result = scoregate("run", "smoke", "--no-langfuse", "--fail-on-gates")

    assert result.code == ExitCode.GATES_FAILED
    summary = runs.summary()
    every = gate(summary, "hallucinations_per_summary")
    floor = "coverage 67% is below the floor 80%"
    assert (every["status"], every["observed"], every["failing_items"]) == ("fail", 3.0, ["smoke-003"])
    assert every["detail"] == f"1 of 4 measured items break <= 1: smoke-003; {floor}"
    faithfulness = gate(summary, "faithfulness")  # a mean the two unmeasured items could still move
    assert (faithfulness["status"], faithfulness["detail"]) == ("incomplete", floor)
    assert faithfulness["observed"] == summary["scores"]["faithfulness_score"]["mean"]
    assert summary["verdict"] == "fail"
    assert "verdict: FAIL" in result.output
    mlflow_run = json.loads((project_dir / "runs" / runs.latest() / "links.json").read_text())["mlflow_run_id"]
    tags = MlflowClient(tracking_uri(project_dir)).get_run(mlflow_run).data.tags
    assert (tags["scoregate.verdict"], tags["gate.hallucinations_per_summary"]) == ("fail", "fail")
    assert tags["gate.hallucinations_per_summary.detail"] == every["detail"]
    posts = {p.name: p for p in run_scores(RunSummary.model_validate(summary), mlflow_run)}
    assert (posts["gate.hallucinations_per_summary"].value, posts["verdict"].value) == ("fail", "fail")


def judged(
    stat: str, op: str, threshold: float, column: list[float | None], *, ids: list[str] | None = None
) -> dict[str, Any]:
    """One gate on metric `x` judged against `column` (None = unmeasured) with the floor at 80%."""
    spec = GateSpec.model_validate({"name": "g", "metric": "x", "stat": stat, "op": op, "threshold": threshold})
    summary = {"scores": {"x": describe(column, resamples=50).to_dict()}, "run_metrics": {}}
    return evaluate_gate(spec, summary, column=column, min_coverage=0.8, item_ids=ids).to_dict()


LOW = [2.0, 4.0, 5.0, None, None]  # coverage 60%, below the floor
HIGH = [4.0, 4.0, 5.0, None, None]


@pytest.mark.parametrize(
    ("stat", "op", "threshold", "column", "status"),
    [
        ("min", ">=", 3, LOW, "fail"),  # the min can only go lower than 2
        ("min", ">=", 3, HIGH, "incomplete"),  # an unmeasured item could still be below 3
        ("min", "==", 3, LOW, "fail"),
        ("min", "==", 3, HIGH, "incomplete"),
        ("min", "<=", 3, LOW, "incomplete"),  # already met, yet a gate never passes below the floor
        ("max", "<=", 4.5, LOW, "fail"),  # the max can only go higher than 5
        ("max", "<", 5, HIGH, "fail"),
        ("max", "<=", 5, LOW, "incomplete"),
        ("max", ">=", 9, LOW, "incomplete"),
        ("median", ">=", 4.5, [1.0, 2.0, 3.0, 4.0, None, None], "fail"),  # at most (3 + 4) / 2
        ("median", ">=", 4.5, [1.0, 2.0, 5.0, 5.0, None, None], "incomplete"),
        ("mean", ">=", 4.5, LOW, "incomplete"),  # the unmeasured items could score anything
        ("ci_low", ">=", 4.5, LOW, "incomplete"),
        ("every_item", ">=", 3, LOW, "fail"),
        ("every_item", ">=", 1, LOW, "incomplete"),
    ],
)
def test_below_the_floor_a_gate_fails_only_when_no_unmeasured_value_could_save_it(
    stat: str, op: str, threshold: float, column: list[float | None], status: str
) -> None:
    result = judged(stat, op, threshold, column)

    assert result["status"] == status
    assert result["detail"].endswith("is below the floor 80%")
    assert result["observed"] == describe(column).to_dict()[{"every_item": "min"}.get(stat, stat)]


def test_a_decided_gate_below_the_floor_says_why_and_fails_the_verdict() -> None:
    decided = judged("min", ">=", 3, LOW)
    undecided = judged("mean", ">=", 3, LOW)

    assert decided["detail"] == (
        "min = 2 breaks >= 3 whatever the unmeasured items score; coverage 60% is below the floor 80%"
    )
    assert (undecided["status"], undecided["detail"]) == ("incomplete", "coverage 60% is below the floor 80%")
    spec = GateSpec(name="g", metric="x", op=">=", threshold=3)
    summary = {"scores": {"x": describe(LOW, resamples=50).to_dict()}, "run_metrics": {}}
    results = [evaluate_gate(spec.model_copy(update={"stat": s}), summary, column=LOW, min_coverage=0.8)
               for s in ("min", "mean")]  # fmt: skip
    assert overall_verdict(results) == "fail"


def test_every_item_gate_names_the_first_breakers_below_the_floor() -> None:
    column: list[float | None] = [3.0, 0.0, 2.0, 4.0, 5.0, 6.0, 7.0, 8.0, None, None, None]
    ids = [f"it-{i}" for i in range(len(column))]

    result = judged("every_item", "<=", 1, column, ids=ids)

    assert (result["status"], result["observed"]) == ("fail", 8.0)
    assert result["failing_items"] == ["it-0", "it-2", "it-3", "it-4", "it-5", "it-6", "it-7"]
    assert result["detail"] == (
        "7 of 8 measured items break <= 1: it-0, it-2, it-3, it-4, it-5, … (+2 more); "
        "coverage 73% is below the floor 80%"
    )


@pytest.mark.parametrize(
    ("column", "status"),
    [
        ([0.0, 2.0, 1.0, None, None], "fail"),
        ([0.0, 1.0, 1.0, None, None], "incomplete"),
        ([0.0, 1.0, 1.0, None], "incomplete"),
        ([0.0, 1.0, 1.0, 0.0, None], "pass"),
        ([0.0, 1.0, 1.0], "pass"),
    ],
)
def test_every_item_observed_is_the_worst_measured_value_whether_decided_or_not(
    column: list[float | None], status: str
) -> None:
    result = judged("every_item", "<=", 1, column)

    assert (result["status"], result["observed"]) == (status, max(v for v in column if v is not None))


def test_every_item_gate_on_a_metric_without_per_item_values_is_incomplete_not_a_silent_pass() -> None:
    spec = GateSpec(name="g", metric="x", stat="every_item", op="<=", threshold=1)
    summary = {"scores": {"x": {"coverage": 1.0, "mean": 0.5}}, "run_metrics": {}}

    result = evaluate_gate(spec, summary, column=None, min_coverage=0.8)

    assert (result.status, result.observed, result.detail) == ("incomplete", None, "x has no per-item values to check")


# ---------------------------------------------------------------- flaky items kept out (quarantined)


def quarantined_gate(column: list[float | None], kept_out: set[str]) -> Any:
    """An every_item gate `x <= 1` over items it-0, it-1, ... with the `kept_out` items quarantined as flaky."""
    spec = GateSpec(name="g", metric="x", stat="every_item", op="<=", threshold=1)
    summary = {"scores": {"x": describe(column, resamples=50).to_dict()}, "run_metrics": {}}
    ids = [f"it-{i}" for i in range(len(column))]
    return evaluate_gate(
        spec, summary, column=column, min_coverage=0.8, item_ids=ids, quarantined=kept_out,
        quarantine_hint="`scoregate items flaky exp`",
    )  # fmt: skip


def test_quarantined_items_count_as_unmeasured_so_a_hollowed_gate_is_incomplete() -> None:
    column: list[float | None] = [0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0]  # 9 items, every one measured

    result = quarantined_gate(column, {"it-4", "it-5", "it-6", "it-7", "it-8"})

    assert (result.status, result.coverage) == ("incomplete", pytest.approx(4 / 9))  # not 100%, not a pass
    assert result.verdict_words() == "incomplete on 4 of 9, 5 quarantined"
    assert result.quarantined == ["it-4", "it-5", "it-6", "it-7", "it-8"]
    assert result.quarantined_breaking == ["it-4"]
    assert "coverage 44% is below the floor 80%" in result.detail


def test_a_three_item_run_whose_only_breaking_item_is_quarantined_does_not_pass() -> None:
    result = quarantined_gate([0.0, 3.0, 0.0], {"it-1"})

    assert result.status == "incomplete" and result.verdict_words() == "incomplete on 2 of 3, 1 quarantined"
    assert result.detail == (
        "0 of 2 measured items break <= 1; 1 flaky item kept out: it-1 (`scoregate items flaky exp`), which "
        "breaks the rule in this run; coverage 67% is below the floor 80%"
    )


def test_a_gate_passed_with_quarantined_items_never_reads_as_a_plain_pass() -> None:
    column: list[float | None] = [0.0] * 9 + [3.0]

    result = quarantined_gate(column, {"it-9"})

    assert (result.status, result.coverage) == ("pass", pytest.approx(0.9))
    assert result.verdict_words() == "pass on 9 of 10, 1 quarantined"
    assert (result.gated_items, result.total_items, result.quarantined_breaking) == (9, 10, ["it-9"])
    plain = quarantined_gate([0.0] * 10, set())
    assert plain.verdict_words() == "pass" and plain.to_dict()["quarantined"] is None
