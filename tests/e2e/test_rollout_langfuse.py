"""A rollout on the Langfuse double with the reference app, end to end: `rollout start` at 50% → the app serves
`canary` to half of its sessions (the sticky helper) → scores posted on the traces (a scripted poster, as `traces
score` or a server-side judge does) → `rollout watch` reads the calls and scores from Langfuse, is killed with
SIGKILL mid-way (some calls still waiting for their score) → `rollout watch --auto` resumes without counting a
call twice and carries the decision out: a clearly better canary promoted, a worse one rolled back."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import Popen
from typing import Any

import numpy as np
import pytest

from scoregate.analysis.rollout_units import form_units
from scoregate.app.promotion import PROMOTIONS_LOG
from scoregate.app.rollout_record import read_record
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.production_traffic import send_traffic
from support.projects import CliResult
from support.promotion_runs import PROMPT, logged_run
from support.promotion_runs import project as project  # the fixture
from support.rollout_live import post_score
from support.scripted_openai import ScriptedOpenAI

pytestmark = pytest.mark.usefixtures("mlflow_store")


def _requests(fake: FakeLangfuse, model: ScriptedOpenAI, sessions: list[str]) -> list[Any]:
    inputs = [{"title": f"Episode {s}", "transcript": f"Talk of {s}."} for s in sessions]
    return send_traffic(fake, model, inputs, prompt=PROMPT, sessions=sessions, canary_share=0.5)


def _score(fake: FakeLangfuse, replies: list[Any], canary_score: float) -> None:
    for reply in replies:
        post_score(fake, reply.trace_id, "quality", canary_score if reply.prompt_version == 2 else 1 - canary_score)


def _readings(project: Path) -> int:
    record = read_record(project, PROMPT)
    return 0 if record is None else len(record.readings)


def _wait_for(project: Path, readings: int) -> None:
    deadline = time.monotonic() + 90
    while _readings(project) < readings and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _readings(project) >= readings, "the watch made no poll in 90 s"


@pytest.mark.parametrize(
    ("canary_score", "decision", "holders"),
    [(1.0, "promote", (2, 2)), (0.0, "rollback", (1, 1))],
    ids=["better-promoted", "worse-rolled-back"],
)
def test_start_traffic_scores_watch_killed_then_resumed_decides_once_and_moves_the_labels(
    project: Path,
    fake_langfuse: FakeLangfuse,
    scripted_server: ScriptedOpenAI,
    scoregate: Callable[..., CliResult],
    start_scoregate: Callable[..., Popen[str]],
    canary_score: float,
    decision: str,
    holders: tuple[int, int],
) -> None:
    logged_run(project, "counters"), logged_run(project, "smoke")
    started = scoregate("rollout", "start", PROMPT, "--version", "2", "--share", "50%", "--metric", "quality")
    assert started.code == 0, started.err
    assert f"then: `scoregate rollout watch {PROMPT}`" in started.out

    first = _requests(fake_langfuse, scripted_server, [f"a-{i}" for i in range(6)])
    _score(fake_langfuse, first, canary_score)
    watch = start_scoregate("rollout", "watch", PROMPT, "--every", "0.2")
    _wait_for(project, 1)
    waiting = _requests(fake_langfuse, scripted_server, [f"b-{i}" for i in range(14)])  # not scored yet
    _wait_for(project, _readings(project) + 2)
    watch.send_signal(signal.SIGKILL)
    watch.wait(timeout=30)
    killed = read_record(project, PROMPT)
    assert killed is not None and killed.state == "live" and killed.readings[-1]["decision"] == "continue"
    assert killed.readings[-1]["assigned"] == 6  # the unscored calls wait for their score
    assert json.loads(killed.cursor or "{}")["waiting"]

    _score(fake_langfuse, waiting, canary_score)
    last = _requests(fake_langfuse, scripted_server, [f"c-{i}" for i in range(20)])
    _score(fake_langfuse, last, canary_score)
    resumed = scoregate("rollout", "watch", PROMPT, "--auto", "--every", "0.2", "--polls", "5")

    assert resumed.code == 0, resumed.err
    assert f"decision: {decision}" in resumed.out
    replies = first + waiting + last
    record = read_record(project, PROMPT)
    assert record is not None and record.readings[-1]["decision"] == decision
    assert record.readings[-1]["assigned"] == len(replies)  # every session once, across the kill
    starts = {s["traceId"]: s["startTimeUnixNano"] / 1e9 for s in fake_langfuse.state.spans if s["parentSpanId"]}
    canary = np.array([r.prompt_version == 2 for r in replies])
    at = np.array([starts[r.trace_id] for r in replies])
    value = np.where(canary, canary_score, 1 - canary_score)
    expected = form_units(at, canary, value, window_s=3600, share=0.5)
    assert record.readings[-1]["units"] == len(expected.difference)  # no call counted twice, none lost
    audit = json.loads((project / PROMOTIONS_LOG).read_text().splitlines()[-1])
    assert audit["action"] == f"rollout {decision}" and audit["figures"]["units"] == len(expected.difference)
    versions = {label: [v["version"] for v in fake_langfuse.state.prompts[PROMPT] if label in v["labels"]]
                for label in ("production", "canary")}  # fmt: skip
    assert (versions["production"], versions["canary"]) == ([holders[0]], [holders[1]])


def test_a_broken_split_halts_the_rollout_across_a_kill_and_decides_nothing(
    project: Path,
    fake_langfuse: FakeLangfuse,
    scripted_server: ScriptedOpenAI,
    scoregate: Callable[..., CliResult],
    start_scoregate: Callable[..., Popen[str]],
) -> None:
    logged_run(project, "counters"), logged_run(project, "smoke")
    started = scoregate("rollout", "start", PROMPT, "--version", "2", "--share", "10%", "--metric", "quality")
    assert started.code == 0, started.err

    def broken(sessions: list[str]) -> list[Any]:  # the app sends half its sessions to the canary, not 10%
        inputs = [{"title": f"Episode {s}", "transcript": f"Talk of {s}."} for s in sessions]
        replies = send_traffic(
            fake_langfuse, scripted_server, inputs, prompt=PROMPT, sessions=sessions, canary_share=0.5
        )
        _score(fake_langfuse, replies, 0.5)  # both versions alike: only the split is wrong
        return replies

    broken([f"a-{i}" for i in range(4)])
    watch = start_scoregate("rollout", "watch", PROMPT, "--every", "0.2")
    _wait_for(project, 1)
    watch.send_signal(signal.SIGKILL)
    watch.wait(timeout=30)
    broken([f"b-{i}" for i in range(60)])
    resumed = scoregate("rollout", "watch", PROMPT, "--auto", "--every", "0.2", "--polls", "5")

    assert resumed.code == 0, resumed.err
    assert "decision: halt" in resumed.out
    record = read_record(project, PROMPT)
    assert record is not None and record.state == "halted" and record.readings[-1]["assigned"] == 64
    audit = json.loads((project / PROMOTIONS_LOG).read_text().splitlines()[-1])
    assert audit["action"] == "rollout halt"
    production = [v["version"] for v in fake_langfuse.state.prompts[PROMPT] if "production" in v["labels"]]
    assert production == [1]  # a halt never promotes
