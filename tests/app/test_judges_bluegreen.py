"""Blue/green for live judges: shadow (green beside blue, and its canary), promote behind the calibration, rollback,
each move in promotions.jsonl, and a move killed half-way finished by running it again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.app.judges_promotion import move_judge
from scoregate.app.judges_shadow import shadow_judge
from scoregate.app.judges_sync import sync_project_judges
from scoregate.errors import ScoregateError
from support.fake_langfuse import FakeLangfuse
from support.judge_canary import HUMAN, JUDGE, LOST, Cli, calibrate_baseline, judge_answers, pinned  # noqa: F401
from support.langfuse_env import point_at
from support.live_traces import send_trace
from support.projects import Runs
from support.scripted_openai import ScriptedOpenAI

RULE = {"name": "live", "judges": [JUDGE], "filter": {"trace_name": ["summarize"]}}


@pytest.fixture
def fake() -> Iterator[FakeLangfuse]:
    with FakeLangfuse(server_mode="new") as server:
        yield server


@pytest.fixture
def blue_live(
    pinned: Path,  # noqa: F811
    fake: FakeLangfuse,
    scoregate: Cli,
    runs: Runs,
    scripted_server: ScriptedOpenAI,
    mlflow_store: str,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    """A calibrated judge live in one rule (blue), three production traces it scored, then its rubric edited and
    applied (green)."""
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)
    point_at(monkeypatch, fake)
    (pinned / "rules").mkdir()
    (pinned / "rules" / "live.yaml").write_text(yaml.safe_dump(RULE), encoding="utf-8")
    first = sync_project_judges(pinned)
    blue = next(p.evaluator_id for p in first.plans if p.file == JUDGE)
    traces = [
        send_trace(fake, f"live {n}", input={"transcript": f"episode {n}"}, output=f"summary {n}") for n in range(3)
    ]
    judge = pinned / "evaluators" / f"{JUDGE}.yaml"
    judge.write_text(judge.read_text(encoding="utf-8").replace("Judge actionability only;", "Judge strictly;"))
    second = sync_project_judges(pinned)
    green = next(p.evaluator_id for p in second.plans if p.file == JUDGE)
    return {"blue": blue, "green": green, "traces": traces}


def rule_targets(fake: FakeLangfuse) -> list[str]:
    (rule,) = fake.state.evals.rules.values()
    return [a["evaluatorId"] for a in rule["evaluatorAssignments"]]


def records(root: Path) -> list[dict[str, Any]]:
    path = root / "promotions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def test_promote_waits_for_the_canary_of_the_judge_as_it_is_now(
    pinned: Path,  # noqa: F811
    fake: FakeLangfuse,
    blue_live: dict[str, Any],
) -> None:
    with pytest.raises(ScoregateError, match="no canary of ev_actionability_v1 as it is now"):
        move_judge(pinned, JUDGE, "promote")

    assert rule_targets(fake) == [blue_live["blue"]] and records(pinned) == []


def test_shadow_scores_green_on_blues_traces_and_runs_the_canary_writing_nothing_to_langfuse(
    pinned: Path,  # noqa: F811
    fake: FakeLangfuse,
    blue_live: dict[str, Any],
) -> None:
    writes_before = [r for r in fake.requests if r.method != "GET"]

    report = shadow_judge(pinned, JUDGE)

    assert (report.blue, report.green) == ([blue_live["blue"]], blue_live["green"])
    assert sorted(t for t, _, _ in report.pairs) == sorted(blue_live["traces"])
    blue_values = {s["traceId"]: float(s["value"]) for s in fake.state.scores if s["source"] == "EVAL"}
    assert all(blue == blue_values[t] and green == 5.0 for t, blue, green in report.pairs)
    assert report.exact == sum(v == 5.0 for v in blue_values.values()) / 3
    assert report.canary is not None and report.canary.drift.status == "ok"
    assert [r for r in fake.requests if r.method != "GET"] == writes_before


def test_promote_then_rollback_move_live_traffic_and_are_recorded(
    pinned: Path,  # noqa: F811
    fake: FakeLangfuse,
    blue_live: dict[str, Any],
) -> None:
    shadow_judge(pinned, JUDGE)

    promoted = move_judge(pinned, JUDGE, "promote")
    on_green = send_trace(fake, "after promote", input={"transcript": "t"}, output="s")
    rolled = move_judge(pinned, JUDGE, "rollback")
    on_blue = send_trace(fake, "after rollback", input={"transcript": "t"}, output="s")

    assert (promoted.target, rolled.target) == (blue_live["green"], blue_live["blue"])
    live = {s["traceId"]: s["metadata"]["evaluator_id"] for s in fake.state.scores if s["source"] == "EVAL"}
    assert (live[on_green], live[on_blue]) == (blue_live["green"], blue_live["blue"])
    assert rule_targets(fake) == [blue_live["blue"]]
    moves = records(pinned)
    assert [(m["action"], m["prompt"], m["version"], m["previous_version"]) for m in moves] == [
        ("promote", f"judge {JUDGE}", blue_live["green"], blue_live["blue"]),
        ("rollback", f"judge {JUDGE}", blue_live["blue"], blue_live["green"]),
    ]
    assert moves[1]["undoes"] == moves[0]["time"] and moves[0]["calibration"].startswith("canary ok")


def test_a_drifted_judge_is_promoted_only_when_forced_with_a_reason(
    pinned: Path,  # noqa: F811
    fake: FakeLangfuse,
    blue_live: dict[str, Any],
    scripted_server: ScriptedOpenAI,
) -> None:
    judge_answers(scripted_server, LOST)
    assert shadow_judge(pinned, JUDGE).canary.drift.status == "drifted"  # type: ignore[union-attr]

    with pytest.raises(ScoregateError, match="is not promoted: canary drifted"):
        move_judge(pinned, JUDGE, "promote")
    with pytest.raises(ScoregateError, match="--force needs --reason"):
        move_judge(pinned, JUDGE, "promote", force=True)
    forced = move_judge(pinned, JUDGE, "promote", force=True, reason="the humans were wrong on gold-003")

    assert forced.forced and rule_targets(fake) == [blue_live["green"]]
    (record,) = records(pinned)
    assert (record["forced"], record["reason"]) == (True, "the humans were wrong on gold-003")


def test_a_promotion_killed_after_its_record_is_finished_by_running_it_again(
    pinned: Path,  # noqa: F811
    fake: FakeLangfuse,
    blue_live: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shadow_judge(pinned, JUDGE)
    import scoregate.integrations.langfuse.evaluators_live as live

    def killed(*args: Any) -> list[str]:
        raise KeyboardInterrupt  # the process dies after the record, before any rule moved

    monkeypatch.setattr(live, "repoint", killed)
    with pytest.raises(KeyboardInterrupt):
        move_judge(pinned, JUDGE, "promote")
    monkeypatch.undo()
    point_at(monkeypatch, fake)

    again = move_judge(pinned, JUDGE, "promote")

    assert (again.recorded, again.rules) == (False, [next(iter(fake.state.evals.rules))])
    assert rule_targets(fake) == [blue_live["green"]]
    assert [r["action"] for r in records(pinned)] == ["promote"]


def test_a_second_promote_changes_nothing_and_records_nothing(
    pinned: Path,  # noqa: F811
    fake: FakeLangfuse,
    blue_live: dict[str, Any],
) -> None:
    shadow_judge(pinned, JUDGE)
    move_judge(pinned, JUDGE, "promote")
    patches = len([r for r in fake.requests if r.method == "PATCH"])

    again = move_judge(pinned, JUDGE, "promote")

    assert (again.rules, again.recorded, again.target) == ([], False, blue_live["green"])
    assert len([r for r in fake.requests if r.method == "PATCH"]) == patches
    assert len(records(pinned)) == 1


def test_rollback_without_a_promotion_says_so(
    pinned: Path,  # noqa: F811
    fake: FakeLangfuse,
    blue_live: dict[str, Any],
) -> None:
    with pytest.raises(ScoregateError, match="has no promotion to roll back"):
        move_judge(pinned, JUDGE, "rollback")
