"""The rollout's live scores read from Langfuse (the double): each poll returns the generations of the two versions
since its cursor, once each, with session, error, latency, cost and the deciding metric's score; a trace without
that score waits for it."""

from __future__ import annotations

import datetime as dt
import hashlib

from scoregate.integrations.langfuse.client import LangfuseSettings
from scoregate.integrations.langfuse.live_calls import read_live_calls
from scoregate.integrations.langfuse.remote import Remote
from support.fake_langfuse import FakeLangfuse
from support.production_traffic import publish_prompt
from support.rollout_live import log_call, post_score

START = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)


def _remote(fake: FakeLangfuse) -> Remote:
    return Remote(LangfuseSettings(public_key=fake.public_key, secret_key=fake.secret_key, host=fake.base_url))


def _digest(session: str) -> str:
    return hashlib.sha256(session.encode()).hexdigest()[:20]


def test_each_scored_call_of_either_version_comes_once_with_its_facts(fake_langfuse: FakeLangfuse) -> None:
    publish_prompt(fake_langfuse, labels=["production", "canary", "other"])
    remote = _remote(fake_langfuse)
    a = log_call(fake_langfuse, "digest", 2, "s-a", cost_usd=0.002)
    b = log_call(fake_langfuse, "digest", 1, "s-b", error=True)
    log_call(fake_langfuse, "digest", 3, "s-c")  # a third version: not the rollout's
    post_score(fake_langfuse, a, "quality", 0.8)
    post_score(fake_langfuse, a, "other_key", 0.1)

    calls, cursor = read_live_calls(remote, "digest", (2, 1), "quality", None, start=START)

    assert sorted(c.trace_id for c in calls) == sorted([a, b])
    by_trace = {c.trace_id: c for c in calls}
    assert (by_trace[a].version, by_trace[a].score, by_trace[a].error) == (2, 0.8, False)
    assert by_trace[a].cost_usd == 0.002 and by_trace[a].latency_ms is not None and by_trace[a].latency_ms >= 0
    assert by_trace[a].session == _digest("s-a")  # never the raw id: the cursor and the record keep digests
    assert (by_trace[b].version, by_trace[b].score, by_trace[b].error) == (1, None, True)  # a failed call counts now
    again, cursor = read_live_calls(remote, "digest", (2, 1), "quality", cursor, start=START)
    assert again == []
    assert "s-a" not in str(cursor)


def test_a_call_without_its_score_waits_and_comes_once_it_is_scored(fake_langfuse: FakeLangfuse) -> None:
    publish_prompt(fake_langfuse, labels=["production", "canary"])
    remote = _remote(fake_langfuse)
    first = log_call(fake_langfuse, "digest", 1, "s-1")

    calls, cursor = read_live_calls(remote, "digest", (2, 1), "quality", None, start=START)
    assert calls == []
    second = log_call(fake_langfuse, "digest", 2, "s-2")
    post_score(fake_langfuse, second, "quality", 1)
    calls, cursor = read_live_calls(remote, "digest", (2, 1), "quality", cursor, start=START)
    assert [(c.trace_id, c.score) for c in calls] == [(second, 1.0)]
    post_score(fake_langfuse, first, "quality", 0)
    calls, cursor = read_live_calls(remote, "digest", (2, 1), "quality", cursor, start=START)
    assert [(c.trace_id, c.score) for c in calls] == [(first, 0.0)]
    assert read_live_calls(remote, "digest", (2, 1), "quality", cursor, start=START)[0] == []


def test_a_call_unscored_past_the_wait_counts_without_a_score(fake_langfuse: FakeLangfuse) -> None:
    publish_prompt(fake_langfuse, labels=["production", "canary"])
    remote = _remote(fake_langfuse)
    trace = log_call(fake_langfuse, "digest", 2, "s-1")
    _, cursor = read_live_calls(remote, "digest", (2, 1), "quality", None, start=START)
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=2)
    calls, cursor = read_live_calls(remote, "digest", (2, 1), "quality", cursor, start=START, now=later)
    assert [(c.trace_id, c.score) for c in calls] == [(trace, None)]
    assert read_live_calls(remote, "digest", (2, 1), "quality", cursor, start=START, now=later)[0] == []


def test_calls_before_the_rollout_started_are_not_read(fake_langfuse: FakeLangfuse) -> None:
    publish_prompt(fake_langfuse, labels=["production", "canary"])
    post_score(fake_langfuse, log_call(fake_langfuse, "digest", 1, "s-1"), "quality", 1)
    later = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)
    assert read_live_calls(_remote(fake_langfuse), "digest", (2, 1), "quality", None, start=later)[0] == []


def test_an_environment_keeps_out_the_calls_of_any_other(fake_langfuse: FakeLangfuse) -> None:
    publish_prompt(fake_langfuse, labels=["production", "canary"])
    served = log_call(fake_langfuse, "digest", 2, "s-1")
    experiment = log_call(fake_langfuse, "digest", 2, "s-2", environment="default")  # e.g. a mirrored run's call
    for trace in (served, experiment):
        post_score(fake_langfuse, trace, "quality", 1)
    remote = _remote(fake_langfuse)
    kept, _ = read_live_calls(remote, "digest", (2, 1), "quality", None, start=START, environment="production")
    assert [c.trace_id for c in kept] == [served]
    every, _ = read_live_calls(remote, "digest", (2, 1), "quality", None, start=START)
    assert sorted(c.trace_id for c in every) == sorted([served, experiment])
