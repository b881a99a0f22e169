"""`scoregate rollout watch` reads Langfuse by default: the calls of both versions linked on the server (the double)
and the deciding metric's score on their traces; without Langfuse and without --scores it says what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoregate.app.rollout import Rollouts
from scoregate.app.rollout_record import read_record, record_path
from scoregate.errors import ScoregateError, UsageError
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.promotion_runs import PROMPT, logged_run
from support.promotion_runs import project as project  # the fixture
from support.rollout_live import log_call, post_score

pytestmark = pytest.mark.usefixtures("mlflow_store")


def _start(project: Path) -> None:
    logged_run(project, "counters"), logged_run(project, "smoke")
    Rollouts(project).start(PROMPT, version=2, share="50%", metric="quality")


def test_without_a_scores_file_the_watch_reads_the_linked_calls_and_their_scores_on_langfuse(
    project: Path, fake_langfuse: FakeLangfuse
) -> None:
    _start(project)
    traces = [log_call(fake_langfuse, PROMPT, 2 - i % 2, f"s-{i}") for i in range(6)]
    for trace in traces[:4]:
        post_score(fake_langfuse, trace, "quality", 1.0)

    first = Rollouts(project).watch(PROMPT, polls=1, every_s=0)
    assert (first.readings[-1].units, first.readings[-1].assigned) == (2, 4)  # two unscored calls wait
    for trace in traces[4:]:
        post_score(fake_langfuse, trace, "quality", 0.0)
    second = Rollouts(project).watch(PROMPT, polls=1, every_s=0)
    assert (second.readings[-1].units, second.readings[-1].assigned) == (3, 6)
    third = Rollouts(project).watch(PROMPT, polls=1, every_s=0)
    assert (third.readings[-1].units, third.readings[-1].assigned) == (3, 6)  # nothing counted twice
    assert "s-0" not in record_path(project, PROMPT).read_text()  # session ids are kept as digests only


def test_without_langfuse_or_a_scores_file_the_watch_says_what_to_do(
    project: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    _start(project)
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "LANGFUSE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ScoregateError, match="--scores FILE"):
        Rollouts(project).watch(PROMPT, polls=1, every_s=0)
    record = read_record(project, PROMPT)
    assert record is not None and record.readings == []


def test_a_rollout_watched_on_langfuse_then_given_a_scores_file_says_so_in_one_error(
    project: Path, fake_langfuse: FakeLangfuse, tmp_path: Path
) -> None:
    _start(project)
    Rollouts(project).watch(PROMPT, polls=1, every_s=0)
    scores = tmp_path / "live.jsonl"
    scores.write_text("")
    with pytest.raises(ScoregateError, match="cursor") as raised:
        Rollouts(project).watch(PROMPT, scores, polls=1, every_s=0)
    assert raised.value.hint is not None and "without --scores" in raised.value.hint
    record = read_record(project, PROMPT)
    assert record is not None and len(record.readings) == 1


def test_an_environment_keeps_a_mirrored_runs_calls_out_of_the_rollout(
    project: Path, fake_langfuse: FakeLangfuse
) -> None:
    _start(project)
    for i in range(4):
        post_score(fake_langfuse, log_call(fake_langfuse, PROMPT, 2 - i % 2, f"s-{i}"), "quality", 1.0)
        post_score(fake_langfuse, log_call(fake_langfuse, PROMPT, 2, f"r-{i}", environment="default"), "quality", 1.0)

    watched = Rollouts(project).watch(PROMPT, environment="production", polls=1, every_s=0)

    assert (watched.readings[-1].units, watched.readings[-1].assigned) == (2, 4)
    with pytest.raises(UsageError, match="--environment"):
        Rollouts(project).watch(PROMPT, project / "live.jsonl", environment="production", polls=1, every_s=0)
