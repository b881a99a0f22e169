"""Gates, composites and judge replies as a user sees them: verdicts, exit codes, nulls with reasons, coverage."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from conftest import CliResult, Runs
from scoregate.errors import ExitCode
from scripted_openai import ScriptedOpenAI, json_for_schema, request_schema

FIRST_TITLE = "Open Models Weekly"  # smoke-001's title; the scripted summary repeats it, so judges see it
SECOND_TITLE = "Founders Digest"  # smoke-002


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
