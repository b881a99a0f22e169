"""`scoregate rollout start | status | watch` on the fake Langfuse: refused requests change nothing; a better canary
is promoted, a worse one rolled back, a broken split halted, each audited; a killed watch resumes; two are refused.

Evidence runs are logged through MlflowClient (`support.promotion_runs.logged_run`); the live scores are a
JSON-lines file the simulated app writes with the sticky helper (`scoregate.support.canary_assignment`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoregate.app.promotion import PROMOTIONS_LOG, PromotionRefused
from scoregate.app.rollout import Rollouts
from scoregate.app.rollout_record import read_record, record_lock, record_path
from scoregate.errors import ScoregateError, UsageError
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.promotion_runs import PROMPT, logged_run, tracking
from support.promotion_runs import project as project  # the fixture
from support.rollout_traffic import live_scores

pytestmark = pytest.mark.usefixtures("mlflow_store")

START = {"version": 2, "share": "10%", "metric": "quality"}


def holder(fake: FakeLangfuse, label: str) -> int | None:
    found = [v["version"] for v in fake.state.prompts[PROMPT] if label in v["labels"]]
    return found[0] if found else None


def _evidence(project: Path) -> None:
    logged_run(project, "counters")
    logged_run(project, "smoke")


def _unchanged(project: Path, fake: FakeLangfuse) -> None:
    assert (holder(fake, "production"), holder(fake, "canary")) == (1, None)
    assert not record_path(project, PROMPT).exists() and not (project / PROMOTIONS_LOG).exists()


@pytest.mark.parametrize("share", ["0%", "120%", "0", "1.5", "ten"])
def test_a_share_outside_0_to_100_percent_is_refused_and_changes_nothing(
    project: Path, fake_langfuse: FakeLangfuse, share: str
) -> None:
    _evidence(project)
    with pytest.raises(UsageError, match="--share must be between 0% and 100%"):
        Rollouts(project).start(PROMPT, **{**START, "share": share})
    _unchanged(project, fake_langfuse)


def test_an_unknown_prompt_no_evidence_or_no_production_label_is_refused_and_changes_nothing(
    project: Path, fake_langfuse: FakeLangfuse
) -> None:
    with pytest.raises(ScoregateError, match="no prompt 'nope' on the Langfuse server"):
        Rollouts(project).start("nope", **START)
    with pytest.raises(PromotionRefused, match="refusing to move 'canary'"):
        Rollouts(project).start(PROMPT, **START)
    _unchanged(project, fake_langfuse)
    fake_langfuse.state.prompts[PROMPT][0]["labels"].remove("production")  # a server without the label
    _evidence(project)
    with pytest.raises(ScoregateError, match="no version labelled `production` on the Langfuse server"):
        Rollouts(project).start(PROMPT, **START)
    assert holder(fake_langfuse, "canary") is None and not record_path(project, PROMPT).exists()


def test_start_moves_canary_through_promote_and_a_second_rollout_is_refused(
    project: Path, fake_langfuse: FakeLangfuse
) -> None:
    _evidence(project)
    record = Rollouts(project).start(PROMPT, **START)

    assert (holder(fake_langfuse, "production"), holder(fake_langfuse, "canary")) == (1, 2)
    assert (record.candidate, record.production, record.share, record.state) == (2, 1, 0.10, "live")
    (audit,) = [json.loads(line) for line in (project / PROMOTIONS_LOG).read_text().splitlines()]
    assert (audit["action"], audit["label"], audit["version"]) == ("promote", "canary", 2)
    with pytest.raises(ScoregateError, match=f"a rollout of '{PROMPT}' is live since"):
        Rollouts(project).start(PROMPT, **START)
    assert len((project / PROMOTIONS_LOG).read_text().splitlines()) == 1


def test_a_better_canary_is_promoted_with_auto_and_audited_with_its_figures(
    project: Path, fake_langfuse: FakeLangfuse, tmp_path: Path
) -> None:
    _evidence(project)
    rollouts = Rollouts(project)
    rollouts.start(PROMPT, **START)
    scores = live_scores(tmp_path / "live.jsonl", effect=0.2)

    told = rollouts.watch(PROMPT, scores, polls=1)  # one poll reads the whole file; it decides but does not act
    assert told.readings[-1].decision == "promote" and told.command == f"scoregate rollout watch {PROMPT} --auto"
    assert holder(fake_langfuse, "production") == 1

    done = rollouts.watch(PROMPT, scores, auto=True, polls=1)

    assert (holder(fake_langfuse, "production"), holder(fake_langfuse, "canary")) == (2, 2)
    assert done.record.state == "promoted" and read_record(project, PROMPT).state == "promoted"  # type: ignore[union-attr]
    log = [json.loads(line) for line in (project / PROMOTIONS_LOG).read_text().splitlines()]
    assert [(r["action"], r["label"]) for r in log] == [
        ("promote", "canary"),
        ("promote", "production"),
        ("rollout promote", "canary"),
    ]
    assert log[-1]["figures"]["lower"] > 0 and log[-1]["figures"]["units"] == done.readings[-1].units
    for run_id in log[0]["evidence_runs"]:  # the canary's evidence runs carry the decision, as `promote` tags them
        tag = tracking().get_run(run_id).data.tags["scoregate.rollout"]
        assert tag.startswith(f"rollout promote v2 over v1 at poll {done.readings[-1].poll}: difference ["), tag


@pytest.mark.parametrize(("effect", "served", "decision"), [(-0.2, None, "rollback"), (0.0, 0.2, "halt")])
def test_a_worse_canary_is_rolled_back_and_a_broken_split_halted_canary_back_on_production(
    project: Path, fake_langfuse: FakeLangfuse, tmp_path: Path, effect: float, served: float | None, decision: str
) -> None:
    _evidence(project)
    rollouts = Rollouts(project)
    rollouts.start(PROMPT, **START)

    done = rollouts.watch(PROMPT, live_scores(tmp_path / "live.jsonl", effect=effect, served=served), auto=True)

    assert done.readings[-1].decision == decision
    assert (holder(fake_langfuse, "production"), holder(fake_langfuse, "canary")) == (1, 1)
    last = json.loads((project / PROMOTIONS_LOG).read_text().splitlines()[-1])
    assert last["action"] == f"rollout {decision}" and last["version"] == 1
    status = rollouts.status(PROMPT)[0]
    assert status.record.state == {"rollback": "rolled_back", "halt": "halted"}[decision] and status.command is None


def test_a_killed_watch_resumes_where_it_stopped_and_a_second_live_one_is_refused(
    project: Path, fake_langfuse: FakeLangfuse, tmp_path: Path
) -> None:
    _evidence(project)
    rollouts = Rollouts(project)
    rollouts.start(PROMPT, **START)
    whole = live_scores(tmp_path / "whole.jsonl", effect=0.2).read_text(encoding="utf-8").splitlines(keepends=True)
    growing = tmp_path / "live.jsonl"
    growing.write_text("".join(whole[:300]), encoding="utf-8")
    first = rollouts.watch(PROMPT, growing, polls=1)
    assert first.readings[-1].decision == "continue"

    refused = pytest.raises(ScoregateError, match=f"another `scoregate rollout watch {PROMPT}` is live")
    with record_lock(project, PROMPT), refused:  # a watch still running elsewhere
        rollouts.watch(PROMPT, growing, polls=1)
    growing.write_text("".join(whole), encoding="utf-8")
    resumed = rollouts.watch(PROMPT, growing, polls=1)

    again = Rollouts(project)
    record = read_record(project, PROMPT)
    assert record is not None and len(record.readings) == 2
    assert record.readings[-1]["assigned"] == len(whole)  # every session counted once across the two watches
    assert "session-1-0" not in record_path(project, PROMPT).read_text()  # ids may be users: kept as digests only
    assert resumed.readings[-1].units == again.status(PROMPT)[0].last["units"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"time": 1, "version": 2, "session": "s", "score": 1, "latency_ms": "slow"}', "latency_ms"),
        ('{"time": 1, "version": "two", "session": "s", "score": 1}', "version"),
        ("not json", "JSON"),
    ],
)
def test_a_bad_live_score_line_is_one_error_naming_the_file_line_and_field_and_records_no_poll(
    project: Path, fake_langfuse: FakeLangfuse, tmp_path: Path, line: str, field: str
) -> None:
    _evidence(project)
    rollouts = Rollouts(project)
    rollouts.start(PROMPT, **START)
    scores = tmp_path / "live.jsonl"
    scores.write_text('{"time": 0, "version": 1, "session": "a", "score": 0}\n' + line + "\n", encoding="utf-8")

    with pytest.raises(ScoregateError) as bad:
        rollouts.watch(PROMPT, scores, polls=1)

    assert f"{scores}: line 2" in bad.value.render() and field in bad.value.render()
    assert read_record(project, PROMPT).readings == []  # type: ignore[union-attr]
