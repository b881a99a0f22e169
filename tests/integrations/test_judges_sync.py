"""Judge files as Langfuse evaluators (v2 API): what is sent, identity on the server, green on change, clear errors."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.client import LangfuseSettings
from scoregate.integrations.langfuse.evaluators_api import EvaluatorGone, EvaluatorsApi
from scoregate.integrations.langfuse.evaluators_sync import JudgeSyncReport, apply_judge, sync_judges
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse
from support.fake_langfuse.rule_runner import judge_value
from support.live_traces import send_trace

JUDGES = ["ev_actionability_v1", "ev_category_match_v1", "ev_faithfulness_v1"]


@pytest.fixture
def fake() -> Iterator[FakeLangfuse]:
    with FakeLangfuse(server_mode="new") as server:
        yield server


def api_of(fake: FakeLangfuse) -> EvaluatorsApi:
    return EvaluatorsApi(LangfuseSettings(fake.public_key, fake.secret_key, fake.base_url))


def sync(fake: FakeLangfuse, root: Path, names: list[str] | None = None, *, dry_run: bool = False) -> JudgeSyncReport:
    return sync_judges(load_project(root), JUDGES if names is None else names, dry_run=dry_run, api=api_of(fake))


def writes(fake: FakeLangfuse) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in fake.requests if r.method in ("POST", "PATCH", "DELETE")]


def edit_judge(root: Path, name: str, **change: Any) -> None:
    path = root / "evaluators" / f"{name}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    path.write_text(yaml.safe_dump({**data, **change}, sort_keys=False), encoding="utf-8")


def test_each_llm_judge_becomes_an_evaluator_named_by_its_score_key(fake: FakeLangfuse, project_dir: Path) -> None:
    report = sync(fake, project_dir)

    evaluators = {e["name"]: e for e in fake.state.evals.evaluators.values()}
    assert sorted(evaluators) == ["actionability_score", "category_match", "faithfulness_score"]
    assert [p.action for p in report.plans] == ["create", "create", "create"]
    latest = fake.state.evals.latest(evaluators["actionability_score"]["id"])
    assert latest["outputDefinition"]["dataType"] == "NUMERIC"
    assert (latest["outputDefinition"]["minValue"], latest["outputDefinition"]["maxValue"]) == (1, 5)
    assert {"variable": "transcript", "source": "input", "jsonPath": "$.transcript"} in latest["variableMapping"]
    assert {"variable": "summary", "source": "output"} in latest["variableMapping"]
    assert latest["modelConfig"] == {"provider": "openai", "model": "scripted-1"}
    assert fake.state.evals.latest(evaluators["category_match"]["id"])["outputDefinition"]["dataType"] == "BOOLEAN"
    assert fake.validation_failures == []


def test_a_second_apply_from_a_fresh_clone_writes_nothing(
    fake: FakeLangfuse, project_dir: Path, tmp_path: Path
) -> None:
    sync(fake, project_dir)
    clone = tmp_path / "clone"
    shutil.copytree(project_dir, clone)
    before = len(writes(fake))

    again = sync(fake, clone)

    assert writes(fake)[before:] == []
    assert [p.action for p in again.plans] == ["unchanged"] * 3
    assert len(fake.state.evals.evaluators) == 3


def test_a_changed_judge_is_a_new_green_evaluator_and_live_traffic_stays_on_blue(
    fake: FakeLangfuse, project_dir: Path
) -> None:
    first = sync(fake, project_dir, ["ev_actionability_v1"])
    blue = first.plans[0].evaluator_id
    assert blue is not None
    fake.state.evals.create_rule({"name": "prod", "enabled": True, "evaluatorAssignments": [{"evaluatorId": blue}]})
    edit_judge(project_dir, "ev_actionability_v1", prompt="Grade the summary {{summary}} strictly.")

    second = sync(fake, project_dir, ["ev_actionability_v1"])
    trace = send_trace(fake, "after the edit")

    green = second.plans[0].evaluator_id
    assert (second.plans[0].action, second.plans[0].blue) == ("green", [blue])
    assert green != blue and fake.state.evals.evaluators[green]["name"] == "actionability_score"
    assert [len(fake.state.evals.versions[i]) for i in (blue, green)] == [1, 1]
    (score,) = [s for s in fake.state.scores if s["traceId"] == trace]
    assert score["metadata"]["evaluator_id"] == blue
    assert score["value"] == judge_value(trace, fake.state.evals.latest(blue))[0]


def test_a_description_change_patches_without_a_new_version(fake: FakeLangfuse, project_dir: Path) -> None:
    sync(fake, project_dir, ["ev_faithfulness_v1"])
    edit_judge(project_dir, "ev_faithfulness_v1", description="Only what the transcript supports.")

    report = sync(fake, project_dir, ["ev_faithfulness_v1"])

    (evaluator,) = fake.state.evals.evaluators.values()
    assert report.plans[0].action == "describe"
    assert evaluator["description"].startswith("Only what the transcript supports.")
    assert len(fake.state.evals.versions[evaluator["id"]]) == 1


def test_counters_that_cannot_run_live_and_other_kinds_stay_local_and_say_why(
    fake: FakeLangfuse, project_dir: Path
) -> None:
    report = sync(fake, project_dir, ["format_checks_v1", "ev_preference_v1"], dry_run=True)

    assert [p.action for p in report.plans] == ["skip", "skip"]
    assert "no counter can run in Langfuse" in report.plans[0].notes[0]
    assert "template-echo check needs the prompt" in report.plans[0].notes[0]
    assert "scored by `scoregate run` only" in report.plans[1].notes[0]
    assert writes(fake) == []


def test_a_plan_writes_nothing(fake: FakeLangfuse, project_dir: Path) -> None:
    report = sync(fake, project_dir, dry_run=True)

    assert (report.writes, writes(fake)) == (3, [])


def test_a_server_without_the_v2_api_is_refused_in_one_line_naming_its_version(project_dir: Path) -> None:
    with FakeLangfuse(server_mode="old") as old, pytest.raises(ScoregateError) as refused:
        sync(old, project_dir)

    assert "\n" not in refused.value.render()
    assert "server 4.16.0" in refused.value.message and "v4.24 or newer" in refused.value.message
    assert [r.method for r in old.requests if r.method != "GET"] == []


def test_a_missing_llm_connection_is_one_line_and_keeps_what_was_made(fake: FakeLangfuse, project_dir: Path) -> None:
    edit_judge(project_dir, "ev_faithfulness_v1", model="claude-haiku")
    config = yaml.safe_load((project_dir / "scoregate.yaml").read_text(encoding="utf-8"))
    config["models"]["claude-haiku"] = {"provider": "anthropic", "model": "claude-3-5-haiku-latest"}
    (project_dir / "scoregate.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    fake.state.evals.llm_providers = {"openai"}

    with pytest.raises(ScoregateError) as refused:
        sync(fake, project_dir)

    assert "HTTP 412" in refused.value.message and "LLM connection" in refused.value.message
    assert "\n" not in refused.value.render()
    fake.state.evals.llm_providers = {"openai", "anthropic"}
    again = sync(fake, project_dir)
    assert [p.action for p in again.plans] == ["unchanged", "unchanged", "create"]


def test_a_rate_limit_says_when_to_retry(fake: FakeLangfuse, project_dir: Path) -> None:
    fake.state.evals.fail_next(429, retry_after_s=12)

    with pytest.raises(ScoregateError) as refused:
        sync(fake, project_dir)

    assert "HTTP 429" in refused.value.message and "again in 12 s" in refused.value.message


def test_an_evaluator_deleted_in_langfuse_mid_apply_is_one_clear_line(fake: FakeLangfuse, project_dir: Path) -> None:
    sync(fake, project_dir, ["ev_faithfulness_v1"])
    edit_judge(project_dir, "ev_faithfulness_v1", description="New words.")
    (plan,) = sync(fake, project_dir, ["ev_faithfulness_v1"], dry_run=True).plans
    assert plan.evaluator_id is not None
    fake.state.evals.delete(plan.evaluator_id)

    with pytest.raises(EvaluatorGone) as gone:
        apply_judge(plan, api_of(fake))

    assert plan.evaluator_id in gone.value.message and "deleted in Langfuse" in gone.value.message
    assert [p.action for p in sync(fake, project_dir, ["ev_faithfulness_v1"]).plans] == ["create"]
