"""`scoregate promote`: refused unless the version's gates passed, then the label moves and the move is audited.

Evidence runs live in a real MLflow sqlite store: made by scoregate's own MLflow mirror from real runs, or
written through MlflowClient with the tags and params that mirror writes. Prompt labels live in the fake
Langfuse, moved by the real SDK's REST client.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

import scoregate.cli as scoregate_cli
from scoregate.app.promotion import AUDIT_TAG, PROMOTIONS_LOG, PromotionRefused, promote, promotion_history, rollback
from scoregate.app.promotion_evidence import experiment_gates_hash
from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.cli import promote_cmd, sync_cmd
from scoregate.errors import ExitCode, ScoregateError
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.projects import CliResult
from support.promotion_runs import PROMPT, logged_run, tracking, upload
from support.promotion_runs import project as project  # the fixture
from support.scripted_openai import ScriptedOpenAI

pytestmark = pytest.mark.usefixtures("mlflow_store")


def holder(fake: FakeLangfuse, label: str = "production") -> int | None:
    """The version of the prompt that holds `label` in the fake Langfuse."""
    found = [v["version"] for v in fake.state.prompts[PROMPT] if label in v["labels"]]
    return found[0] if found else None


def tracked_run(root: Path, experiment: str) -> str:
    """Run an experiment for real on the Langfuse prompts (candidate, else production), mirrored to MLflow."""
    outcome = run_experiment(
        root, experiment, RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"langfuse"})), use_cache=False)
    )
    assert outcome.store.manifest["receipts"]["prompts"][PROMPT]["version"] == "2"
    return outcome.mirrors["mlflow"]


# ---------------------------------------------------------------- through real runs
def test_a_version_whose_gates_passed_is_promoted_and_the_move_is_audited(
    project: Path, fake_langfuse: FakeLangfuse
) -> None:
    smoke, counters = tracked_run(project, "smoke"), tracked_run(project, "counters")

    result = promote(project, PROMPT, version=2)

    assert result.applied and (holder(fake_langfuse), result.previous_version) == (2, 1)
    assert holder(fake_langfuse, "candidate") == 2
    (record,) = [json.loads(line) for line in (project / PROMOTIONS_LOG).read_text().splitlines()]
    config = (project / "scoregate.yaml").read_bytes()
    assert {k: record[k] for k in ("action", "prompt", "label", "version", "previous_version", "forced", "user")} == {
        "action": "promote", "prompt": PROMPT, "label": "production", "version": 2, "previous_version": 1,
        "forced": False, "user": "alice",
    }  # fmt: skip
    assert record["evidence_runs"] == [smoke, counters]
    assert record["gate_file_hash"] == hashlib.sha256(config).hexdigest()
    assert record["gates_hash"]["smoke"] == experiment_gates_hash(load_project(project), "smoke")
    assert [e["verdict"] for e in record["evidence"]] == ["pass", "pass"]
    for run_id in (smoke, counters):
        tags = tracking().get_run(run_id).data.tags
        (audit,) = json.loads(tags[AUDIT_TAG])
        assert (audit["action"], audit["version"], audit["previous_version"]) == ("promote", 2, 1)
        assert tags["promotion.production"].startswith("promote v2")


def test_a_failed_gate_refuses_promotion_until_a_newer_full_run_passes(
    project: Path, scripted_server: ScriptedOpenAI, fake_langfuse: FakeLangfuse
) -> None:
    tracked_run(project, "counters")
    scripted_server.judge_score = 1  # the judges grade the candidate's summaries 1/5
    tracked_run(project, "smoke")

    with pytest.raises(PromotionRefused) as refused:
        promote(project, PROMPT, version=2)

    assert refused.value.exit_code == ExitCode.GATES_FAILED
    assert "smoke: gates did not pass" in refused.value.message and "faithfulness fail" in refused.value.message
    assert "counters" not in refused.value.message
    assert holder(fake_langfuse) == 1 and not (project / PROMOTIONS_LOG).exists()
    scripted_server.judge_score = None
    tracked_run(project, "smoke")
    assert promote(project, PROMPT, version=2).applied and holder(fake_langfuse) == 2


# ---------------------------------------------------------------- what is not evidence
RUN_SMOKE = "`scoregate run smoke --prompt-version 2`"


@pytest.mark.parametrize(
    ("smoke_run", "expected", "fix"),
    [
        (None, "smoke: no run of summarization-catchup v2", f"run it: {RUN_SMOKE}"),
        ({"gates": {"sections_present": "pass", "faithfulness": "incomplete"}}, "faithfulness incomplete", ""),
        ({"gates": {"sections_present": "fail", "faithfulness": "pass"}}, "sections_present fail", ""),
        ({"version": "1"}, "smoke: no run of summarization-catchup v2", f"run it: {RUN_SMOKE}"),
        ({"limit": "3"}, "ran only 3 items (--limit)", f"run the whole dataset: {RUN_SMOKE} (without --limit)"),
        (
            {"gates_hash": "0" * 64},
            "judged by other gates than scoregate.yaml has now",
            f"run it again under today's gates: {RUN_SMOKE}",
        ),
        (
            {"tags": {"scoregate.stop_early": "stopped at 10 of 16"}},
            "stopped early (stopped at 10 of 16): not the",
            f"run the whole dataset: {RUN_SMOKE} (without --stop-early)",
        ),
        (
            {"model": "canned"},
            "ran on model 'canned', not 'scripted', the model experiment smoke runs on",
            "run it on model 'scripted': `scoregate run smoke --prompt-version 2 --model scripted`",
        ),
    ],
    ids=["missing", "incomplete", "failed", "other-version", "subset", "stale-gates", "stopped-early", "other-model"],
)
def test_promotion_is_refused_without_a_valid_passing_run(
    project: Path, fake_langfuse: FakeLangfuse, smoke_run: dict[str, Any] | None, expected: str, fix: str
) -> None:
    logged_run(project, "counters")
    if smoke_run is not None:
        logged_run(project, "smoke", **smoke_run)

    with pytest.raises(PromotionRefused, match="refusing to move 'production'") as refused:
        promote(project, PROMPT, version=2, dry_run=True)

    assert expected in refused.value.message
    assert fix in refused.value.message
    assert holder(fake_langfuse) == 1


def test_the_newest_valid_run_is_the_evidence(project: Path, fake_langfuse: FakeLangfuse) -> None:
    logged_run(project, "counters")
    logged_run(project, "smoke", gates={"faithfulness": "fail"})
    newest = logged_run(project, "smoke")
    logged_run(project, "smoke", limit="2", gates={"faithfulness": "fail"})  # a newer subset run does not count

    result = promote(project, PROMPT, version=2)

    assert result.evidence[0].mlflow_run_id == newest and holder(fake_langfuse) == 2


def test_a_prompt_without_promotion_experiments_or_an_unknown_version_is_an_error(project: Path) -> None:
    with pytest.raises(ScoregateError, match="lists no experiments to gate the promotion of prompt 'other'"):
        promote(project, "other", version=1)
    logged_run(project, "counters", version="7")
    logged_run(project, "smoke", version="7")
    with pytest.raises(ScoregateError, match="has no version 7 in Langfuse"):
        promote(project, PROMPT, version=7)


# ---------------------------------------------------------------- force, dry run, rollback, registry
def test_forcing_needs_a_reason_and_records_what_failed(project: Path, fake_langfuse: FakeLangfuse) -> None:
    logged_run(project, "counters", gates={"sections_present": "fail", "tldr_caps_met": "pass"})
    with pytest.raises(ScoregateError, match="--force needs --reason"):
        promote(project, PROMPT, version=2, force=True)

    result = promote(project, PROMPT, version=2, force=True, reason="hotfix for a broken prompt")

    assert result.applied and holder(fake_langfuse) == 2
    (record,) = promotion_history(project)
    assert record["forced"] is True and record["reason"] == "hotfix for a broken prompt"
    assert record["failures"] == [
        "smoke: no run of summarization-catchup v2; run it: `scoregate run smoke --prompt-version 2`",
        "counters: gates did not pass in run counters-logged-0: sections_present fail",
    ]


def test_a_dry_run_moves_nothing_and_records_nothing(project: Path, fake_langfuse: FakeLangfuse) -> None:
    logged_run(project, "counters")
    logged_run(project, "smoke")

    result = promote(project, PROMPT, version=2, dry_run=True)

    assert not result.applied and result.previous_version == 1 and not result.failures
    assert holder(fake_langfuse) == 1 and promotion_history(project) == []


def test_rollback_moves_the_label_back_and_is_audited_too(project: Path, fake_langfuse: FakeLangfuse) -> None:
    logged_run(project, "counters")
    smoke = logged_run(project, "smoke")
    with pytest.raises(ScoregateError, match="no move of 'production' on prompt"):
        rollback(project, PROMPT)
    promote(project, PROMPT, version=2)

    result = rollback(project, PROMPT, reason="users report worse summaries")

    assert (result.version, result.previous_version, holder(fake_langfuse)) == (1, 2, 1)
    promoted, rolled_back = promotion_history(project, PROMPT)
    assert (rolled_back["action"], rolled_back["version"], rolled_back["previous_version"]) == ("rollback", 1, 2)
    assert rolled_back["undoes"] == promoted["time"] and rolled_back["reason"] == "users report worse summaries"
    audit = json.loads(tracking().get_run(smoke).data.tags[AUDIT_TAG])
    assert [a["action"] for a in audit] == ["promote", "rollback"]


def test_rollback_refuses_when_the_label_was_moved_outside_scoregate(
    project: Path, fake_langfuse: FakeLangfuse
) -> None:
    logged_run(project, "counters")
    logged_run(project, "smoke")
    promote(project, PROMPT, version=2)
    upload(fake_langfuse, load_project(project).prompts[PROMPT], ["production"])  # v3, moved by hand

    with pytest.raises(ScoregateError, match=r"'production' is on v3 .* moved outside scoregate"):
        rollback(project, PROMPT)

    assert holder(fake_langfuse) == 3
    assert rollback(project, PROMPT, force=True, reason="v3 was an accident").version == 1
    assert holder(fake_langfuse) == 1


def test_the_mlflow_prompt_registry_alias_follows_the_label(project: Path, fake_langfuse: FakeLangfuse) -> None:
    import mlflow

    mlflow.set_tracking_uri(os.environ["MLFLOW_TRACKING_URI"])
    for text, langfuse_version in (("v1 {{transcript}}", "1"), ("v2 {{transcript}}", "2")):
        mlflow.genai.register_prompt(PROMPT, text, tags={"langfuse_version": langfuse_version})
    logged_run(project, "counters")
    logged_run(project, "smoke")

    result = promote(project, PROMPT, version=2)

    assert result.mlflow_alias == 2
    assert tracking().get_prompt_version_by_alias(PROMPT, "production").version == 2
    rollback(project, PROMPT)
    assert tracking().get_prompt_version_by_alias(PROMPT, "production").version == 1


# ---------------------------------------------------------------- the commands
@pytest.fixture
def cli(scoregate: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., CliResult]]:
    """The `scoregate` fixture with this feature's commands registered (as `scoregate.cli` registers them)."""
    app = typer.Typer(pretty_exceptions_enable=False, add_completion=False)
    app.command("langfuse-sync")(sync_cmd.langfuse_sync)
    app.command("promote")(promote_cmd.promote_command)
    app.command("promotions")(promote_cmd.promotions_command)
    monkeypatch.setattr(scoregate_cli, "app", app)
    yield scoregate


def test_promote_commands_exit_codes_and_history(
    project: Path, cli: Callable[..., CliResult], fake_langfuse: FakeLangfuse
) -> None:
    logged_run(project, "counters", gates={"sections_present": "incomplete", "tldr_caps_met": "pass"})

    refused = cli("promote", PROMPT, "--version", "2")
    assert refused.code == ExitCode.GATES_FAILED
    assert "counters: gates did not pass" in refused.output and "smoke: no run of" in refused.output
    assert cli("promote", PROMPT, "--version", "2", "--force").code == ExitCode.USAGE
    assert cli("promote", PROMPT).code == ExitCode.USAGE
    assert cli("promotions").output.strip() == "no promotions recorded"

    forced = cli("promote", PROMPT, "--version", "2", "--force", "--reason", "release day")
    assert forced.code == 0, forced.output
    assert "'production': v1 → v2 of summarization-catchup" in forced.output
    back = cli("promote", "--rollback", PROMPT)
    assert back.code == 0 and "rolled back 'production': v2 → v1" in back.output and holder(fake_langfuse) == 1

    listing = cli("promotions", PROMPT)
    assert listing.code == 0
    assert "promote" in listing.output and "rollback" in listing.output and "release day" in listing.output


def test_repeated_rollbacks_walk_back_through_the_history_and_say_from_which_version(
    project: Path, cli: Callable[..., CliResult], fake_langfuse: FakeLangfuse
) -> None:
    prompts = load_project(project).prompts
    upload(fake_langfuse, prompts[PROMPT].model_copy(update={"description": "v3"}), [])
    v2_runs = {logged_run(project, x, version="2") for x in ("counters", "smoke")}
    promote(project, PROMPT, version=2)
    for experiment in ("counters", "smoke"):
        logged_run(project, experiment, version="3")
    promote(project, PROMPT, version=3)
    assert holder(fake_langfuse) == 3

    first = cli("promote", "--rollback", PROMPT)
    assert first.code == 0, first.output
    assert "rolled back 'production': v3 → v2 of summarization-catchup" in first.output
    assert f"evidence for {PROMPT} v2" in first.output
    assert {e.mlflow_run_id for e in rollback_evidence(project)} == v2_runs
    assert holder(fake_langfuse) == 2

    second = cli("promote", "--rollback", PROMPT)
    assert second.code == 0 and "rolled back 'production': v2 → v1" in second.output  # not back to v3
    assert holder(fake_langfuse) == 1

    third = cli("promote", "--rollback", PROMPT)
    assert third.code != 0 and "has been rolled back already" in third.output
    actions = [(r["action"], r["previous_version"], r["version"]) for r in promotion_history(project, PROMPT)]
    assert actions == [("promote", 1, 2), ("promote", 2, 3), ("rollback", 3, 2), ("rollback", 2, 1)]


def rollback_evidence(root: Path) -> list[Any]:
    """The evidence the newest rollback record carries."""
    from scoregate.app.promotion_evidence import Evidence

    return [Evidence(**e) for e in promotion_history(root, PROMPT)[-1]["evidence"]]
