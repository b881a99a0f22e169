"""A `scoregate rollout watch` killed with SIGKILL between polls resumes from its record: no trace read twice or
lost, and the decision it then reaches is carried out and audited."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import Popen

import pytest

from scoregate.app.promotion import PROMOTIONS_LOG
from scoregate.app.rollout import Rollouts
from scoregate.app.rollout_record import read_record
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.promotion_runs import PROMPT, logged_run
from support.promotion_runs import project as project  # the fixture
from support.rollout_traffic import live_scores

pytestmark = pytest.mark.usefixtures("mlflow_store")


def test_a_watch_killed_mid_way_resumes_and_promotes_a_better_canary(
    project: Path, fake_langfuse: FakeLangfuse, tmp_path: Path, start_scoregate: Callable[..., Popen[str]]
) -> None:
    logged_run(project, "counters"), logged_run(project, "smoke")
    Rollouts(project).start(PROMPT, version=2, share="10%", metric="quality")
    lines = live_scores(tmp_path / "all.jsonl", effect=0.1).read_text(encoding="utf-8").splitlines(keepends=True)
    growing = tmp_path / "live.jsonl"
    growing.write_text("".join(lines[:200]), encoding="utf-8")

    watch = start_scoregate("rollout", "watch", PROMPT, "--scores", str(growing), "--every", "0.2")
    deadline, fed = time.monotonic() + 120, 200
    while time.monotonic() < deadline:
        record = read_record(project, PROMPT)
        if record is not None and len(record.readings) >= 3:
            break
        if fed < 600:
            with growing.open("a", encoding="utf-8") as out:
                out.write("".join(lines[fed : fed + 50]))
            fed += 50
        time.sleep(0.2)
    watch.send_signal(signal.SIGKILL)
    watch.wait(timeout=30)
    killed = read_record(project, PROMPT)
    assert killed is not None and killed.state == "live" and len(killed.readings) >= 3
    assert fake_langfuse.state.prompts[PROMPT][0]["labels"].count("production") == 1

    with growing.open("a", encoding="utf-8") as out:
        out.write("".join(lines[fed:]))
    done = Rollouts(project).watch(PROMPT, growing, auto=True, polls=1)

    assert done.readings[-1].decision == "promote" and done.record.state == "promoted"
    assert done.record.readings[-1]["assigned"] == len(lines)  # every session once, across the kill
    assert json.loads((project / PROMOTIONS_LOG).read_text().splitlines()[-1])["action"] == "rollout promote"
