"""Rule files as Langfuse evaluation rules: round trip, live scoring, and the cost a day held to the budget."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.app.judges_sync import sync_project_judges
from scoregate.errors import ScoregateError
from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import point_at
from support.live_traces import send_trace

RULE = {
    "name": "production_summaries",
    "judges": ["ev_actionability_v1", "ev_faithfulness_v1"],
    "sampling": 0.5,
    "filter": {"trace_name": ["summarize"], "environment": ["production"]},
}


@pytest.fixture
def fake(project_dir: Path, mlflow_store: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangfuse]:
    """The fake Langfuse (v2 API) with the environment pointing at it; MLflow on a migrated store."""
    with FakeLangfuse(server_mode="new") as server:
        point_at(monkeypatch, server)
        yield server


def write(root: Path, relative: str, data: dict[str, Any]) -> None:
    (root / relative).parent.mkdir(parents=True, exist_ok=True)
    (root / relative).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def configure(root: Path, *, budget_usd: float | None, price: float | None = 1.0) -> None:
    config = yaml.safe_load((root / "scoregate.yaml").read_text(encoding="utf-8"))
    if price is not None:
        judge = config["models"][config["settings"]["judge_model"]]
        judge.update(input_cost_per_mtok=price, output_cost_per_mtok=price)
    if budget_usd is not None:
        config["settings"]["budget"] = {"usd": budget_usd}
    (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def writes(fake: FakeLangfuse) -> list[tuple[str, str]]:
    return [
        (r.method, r.path) for r in fake.requests if r.method in ("POST", "PATCH", "DELETE") and "otel" not in r.path
    ]


def test_a_rule_file_becomes_one_rule_on_the_judges_evaluators_and_a_second_apply_writes_nothing(
    fake: FakeLangfuse, project_dir: Path
) -> None:
    write(project_dir, "rules/production_summaries.yaml", RULE)

    first = sync_project_judges(project_dir)
    before = len(writes(fake))
    second = sync_project_judges(project_dir)

    (rule,) = fake.state.evals.rules.values()
    by_name = {e["name"]: e["id"] for e in fake.state.evals.evaluators.values()}
    assert rule["name"] == "production_summaries [scoregate]"
    assert (rule["enabled"], rule["sampling"]) == (True, 0.5)
    assert [a["evaluatorId"] for a in rule["evaluatorAssignments"]] == [
        by_name["actionability_score"],
        by_name["faithfulness_score"],
    ]
    assert [r.action for r in first.rules] == ["create"] and [r.action for r in second.rules] == ["unchanged"]
    assert writes(fake)[before:] == []
    assert fake.validation_failures == []


def test_the_rule_scores_only_the_traces_its_filter_admits(fake: FakeLangfuse, project_dir: Path) -> None:
    write(project_dir, "rules/production_summaries.yaml", {**RULE, "sampling": 1})
    sync_project_judges(project_dir)

    scored = send_trace(fake, "prod", name="summarize", environment="production")
    staging = send_trace(fake, "staging", name="summarize", environment="staging")

    names = sorted(s["name"] for s in fake.state.scores if s["traceId"] == scored)
    assert names == ["actionability_score", "faithfulness_score"]
    assert [s for s in fake.state.scores if s["traceId"] == staging] == []


def test_a_rule_over_the_budget_is_refused_before_anything_is_written(fake: FakeLangfuse, project_dir: Path) -> None:
    for number in range(70):
        send_trace(fake, f"recent {number}", age_days=number / 10)
    configure(project_dir, budget_usd=0.0001)
    write(project_dir, "rules/production_summaries.yaml", RULE)

    with pytest.raises(ScoregateError) as refused:
        sync_project_judges(project_dir)

    message = refused.value.message
    assert "rule production_summaries [scoregate]: forecast" in message
    assert "10.0 matching traces a day × sampling 0.5 × 2 judge(s) is over the budget of $0.0001" in message
    assert "--force --reason" in message
    assert writes(fake) == [] and fake.state.evals.evaluators == {}


def test_the_traffic_a_rule_is_priced_on_is_its_own_filter_over_the_last_seven_days(
    fake: FakeLangfuse, project_dir: Path
) -> None:
    for number in range(14):
        send_trace(fake, f"a {number}", metadata={"prompt_name": "summarize"}, age_days=number / 2)
    for number in range(7):
        send_trace(fake, f"b {number}", metadata={"prompt_name": "other"})
    for number in range(10):
        send_trace(fake, f"old {number}", metadata={"prompt_name": "summarize"}, age_days=8 + number / 3)
    configure(project_dir, budget_usd=100)
    write(
        project_dir,
        "rules/summaries.yaml",
        {**RULE, "name": "summaries", "filter": {"metadata": {"prompt_name": "summarize"}}},
    )

    report = sync_project_judges(project_dir, dry_run=True)

    (rule,) = report.rules
    assert rule.traces_per_day == 2.0  # 14 matching in the last 7 days; the 7 others and the 10 older ones not


def test_forced_with_a_reason_the_rule_is_made_and_the_reason_kept(fake: FakeLangfuse, project_dir: Path) -> None:
    send_trace(fake, "recent")
    configure(project_dir, budget_usd=0.0001)
    write(project_dir, "rules/production_summaries.yaml", RULE)

    with pytest.raises(ScoregateError, match="--force needs --reason"):
        sync_project_judges(project_dir, force=True)
    report = sync_project_judges(project_dir, force=True, reason="launch week: watch every trace")

    (record,) = [json.loads(line) for line in (project_dir / "judges.jsonl").read_text().splitlines()]
    assert report.forced == "launch week: watch every trace" and len(fake.state.evals.rules) == 1
    assert record["reason"] == "launch week: watch every trace" and record["action"] == "rule over budget"
    assert record["user"] and record["time"]


def test_a_cost_that_cannot_be_known_is_not_a_pass_under_a_budget(fake: FakeLangfuse, project_dir: Path) -> None:
    send_trace(fake, "recent")
    configure(project_dir, budget_usd=5, price=None)
    write(project_dir, "rules/production_summaries.yaml", RULE)

    with pytest.raises(ScoregateError, match="its cost a day is unknown"):
        sync_project_judges(project_dir)


def test_a_rule_scoped_to_experiment_items_filters_on_the_dataset_id(fake: FakeLangfuse, project_dir: Path) -> None:
    dataset = fake.state.upsert_dataset({"name": "smoke_v1"})
    rule = {"name": "smoke_items", "judges": ["ev_faithfulness_v1"], "filter": {"experiment_dataset": "smoke_v1"}}
    write(project_dir, "rules/smoke_items.yaml", rule)

    sync_project_judges(project_dir)
    item = send_trace(fake, "item", experiment={"item.id": "i1", "dataset.id": dataset["id"]})
    other = send_trace(fake, "other dataset", experiment={"item.id": "i2", "dataset.id": "elsewhere"})

    (score,) = [s for s in fake.state.scores if s["traceId"] == item]
    assert score["metadata"]["target_dataset_item_id"] == "i1"
    assert [s for s in fake.state.scores if s["traceId"] == other] == []


def test_a_rule_naming_a_judge_that_cannot_run_live_says_why(fake: FakeLangfuse, project_dir: Path) -> None:
    write(project_dir, "rules/counting.yaml", {"name": "counting", "judges": ["format_checks_v1"]})

    with pytest.raises(ScoregateError) as refused:
        sync_project_judges(project_dir)

    assert refused.value.where == "rules/counting.yaml"
    assert "'format_checks_v1' cannot run in Langfuse: no counter can run in Langfuse" in refused.value.message
    assert writes(fake) == []


def test_a_changed_judge_leaves_the_rule_on_blue(fake: FakeLangfuse, project_dir: Path) -> None:
    write(project_dir, "rules/production_summaries.yaml", RULE)
    first = sync_project_judges(project_dir)
    blue = first.rules[0].assignments["ev_actionability_v1"]
    judge = project_dir / "evaluators" / "ev_actionability_v1.yaml"
    judge.write_text(judge.read_text(encoding="utf-8").replace("Judge actionability only;", "Judge strictly;"))

    second = sync_project_judges(project_dir)

    (rule,) = fake.state.evals.rules.values()
    assert [p.action for p in second.plans if p.file == "ev_actionability_v1"] == ["green"]
    assert second.rules[0].action == "unchanged"
    assert rule["evaluatorAssignments"][0]["evaluatorId"] == blue


def test_a_plan_shows_the_refusal_an_apply_would_make_and_writes_nothing(fake: FakeLangfuse, project_dir: Path) -> None:
    send_trace(fake, "recent")
    configure(project_dir, budget_usd=0.0001)
    write(project_dir, "rules/production_summaries.yaml", RULE)

    report = sync_project_judges(project_dir, dry_run=True)

    (problem,) = report.over_budget
    assert problem.startswith("rule production_summaries [scoregate]: forecast $")
    assert writes(fake) == []


def test_a_rule_may_run_a_counters_code_evaluator_at_no_model_cost(fake: FakeLangfuse, project_dir: Path) -> None:
    for number in range(70):
        send_trace(fake, f"recent {number}", age_days=number / 10)
    configure(project_dir, budget_usd=0.0001)
    write(project_dir, "rules/counting.yaml", {"name": "counting", "judges": ["counters_v1"], "sampling": 1})

    report = sync_project_judges(project_dir)

    (rule,) = fake.state.evals.rules.values()
    (evaluator,) = [e for e in fake.state.evals.evaluators.values() if e["name"] == "counters_v1"]
    assert [a["evaluatorId"] for a in rule["evaluatorAssignments"]] == [evaluator["id"]]
    assert fake.state.evals.latest(evaluator["id"])["type"] == "code"
    (plan,) = report.rules
    assert plan.cost is not None and plan.cost.calls == 0 and report.forced is None


def test_a_renamed_rule_file_disables_its_old_rule_and_never_deletes_it(
    fake: FakeLangfuse, project_dir: Path, scoregate: Any
) -> None:
    write(project_dir, "rules/production_summaries.yaml", RULE)
    sync_project_judges(project_dir)
    (project_dir / "rules" / "production_summaries.yaml").unlink()
    write(project_dir, "rules/summaries_v2.yaml", {**RULE, "name": "summaries_v2"})

    plan = sync_project_judges(project_dir, dry_run=True)
    shown = scoregate("judges", "plan")
    applied = sync_project_judges(project_dir)
    again = sync_project_judges(project_dir)

    actions = {r.name: r.action for r in plan.rules}
    assert actions == {"production_summaries [scoregate]": "disable", "summaries_v2 [scoregate]": "create"}
    rules = {r["name"]: r for r in fake.state.evals.rules.values()}
    assert set(rules) == {"production_summaries [scoregate]", "summaries_v2 [scoregate]"}  # nothing deleted
    assert rules["production_summaries [scoregate]"]["enabled"] is False
    assert rules["summaries_v2 [scoregate]"]["enabled"] is True
    assert [r.action for r in applied.rules if r.name.startswith("production")] == ["disable"]
    assert again.writes == 0 and ("DELETE" not in {method for method, _ in writes(fake)})
    flat = " ".join(shown.output.split())
    assert "production_summaries [scoregate]: no rule file rules/production_summaries.yaml" in flat
    assert "disabled, not deleted" in flat
