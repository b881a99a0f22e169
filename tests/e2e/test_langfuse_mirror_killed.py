"""Runs as Langfuse experiments, exactly once, even when `langfuse-sync` is killed with -9 at any moment: the
real executable against the in-process fake Langfuse; a redone sync leaves each span and score once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from scoregate.store.run_store import RunStore
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.langfuse_mirror import ROOT_SPAN, results, score_ids
from support.langfuse_mirror import judged_run as judged_run
from support.langfuse_mirror import langfuse_off as langfuse_off  # the fixtures
from support.langfuse_mirror import langfuse_on as langfuse_on
from support.langfuse_sync import sync_run

KILL_FIRST_AT_S, KILL_STEP_S, KILL_AT_MOST = 0.8, 0.05, 60
"""`langfuse-sync` is killed at 0.8 s, 0.85 s, ...: while it starts, reaches the server, sends spans, sends scores."""


def _sent(fake: FakeLangfuse) -> int:
    return len(fake.state.spans) + len(fake.state.scores)


def test_langfuse_sync_killed_9_at_any_moment_then_redone_leaves_each_span_and_score_once(
    judged_run: RunStore,
    project_dir: Path,
    fake_langfuse: FakeLangfuse,
    langfuse_on: Callable[[], None],
    start_scoregate: Callable[..., subprocess.Popen[str]],
) -> None:
    langfuse_on()
    killed, cut_mid_send, delay = 0, 0, KILL_FIRST_AT_S
    while killed < KILL_AT_MOST:  # each try is killed a little later, until one finishes by itself
        sent_before = _sent(fake_langfuse)
        process = start_scoregate("langfuse-sync", judged_run.run_id)
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline and process.poll() is None:
            if not cut_mid_send and _sent(fake_langfuse) > sent_before:  # one kill right after the first post lands
                break
            time.sleep(0.002)
        if process.poll() is not None:
            break
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        killed, delay = killed + 1, delay + KILL_STEP_S
        cut_mid_send += bool(fake_langfuse.state.spans or fake_langfuse.state.scores)  # scores first, spans at the end
    assert process.wait() == 0, process.communicate()
    assert cut_mid_send >= 1, f"none of the {killed} kills landed after the sync had sent something"

    report = sync_run(project_dir, judged_run.run_id)

    assert report.complete, report.lines()
    spans = {(s["traceId"], s["spanId"]): s["name"] for s in fake_langfuse.state.spans}
    roots = {key for key, name in spans.items() if name == ROOT_SPAN}
    assert len(roots) == len(results(judged_run))  # one root span id per item, however often it was sent
    per_trace = Counter((trace, name) for (trace, _), name in spans.items())
    assert set(per_trace.values()) == {1}  # every span of a trace has one id, however often it was sent
    assert len(set(score_ids(fake_langfuse))) == len(fake_langfuse.state.scores)
    targets = [(s["traceId"], s["datasetRunId"], s["name"]) for s in fake_langfuse.state.scores]
    assert len(set(targets)) == len(targets)  # no score stored twice under two ids
    again = sync_run(project_dir, judged_run.run_id)
    assert (again.items_sent, again.scores_sent) == (0, 0)
