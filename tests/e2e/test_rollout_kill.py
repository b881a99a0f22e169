"""A `scoregate rollout watch` killed with SIGKILL mid-way resumes from its record: no trace read twice or lost, and
the decision it then reaches (a better canary promoted, a worse one rolled back, a broken split halted) is carried
out on the Langfuse double and audited."""

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


@pytest.mark.parametrize(
    ("effect", "served", "decision", "labels"),
    [(0.1, None, "promote", (2, 2)), (-0.1, None, "rollback", (1, 1)), (0.0, 0.14, "halt", (1, 1))],
    ids=["better", "worse", "broken-split"],
)
def test_a_watch_killed_mid_way_resumes_and_carries_out_its_decision(
    project: Path,
    fake_langfuse: FakeLangfuse,
    tmp_path: Path,
    start_scoregate: Callable[..., Popen[str]],
    effect: float,
    served: float | None,
    decision: str,
    labels: tuple[int, int],
) -> None:
    logged_run(project, "counters"), logged_run(project, "smoke")
    Rollouts(project).start(PROMPT, version=2, share="10%", metric="quality")
    lines = (
        live_scores(tmp_path / "all.jsonl", effect=effect, served=served)
        .read_text(encoding="utf-8")
        .splitlines(keepends=True)
    )
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

    assert done.readings[-1].decision == decision, done.readings[-1].reason
    assert done.record.readings[-1]["assigned"] == len(lines)  # every session once, across the kill
    last = json.loads((project / PROMOTIONS_LOG).read_text().splitlines()[-1])
    assert last["action"] == f"rollout {decision}" and last["figures"]["poll"] == len(done.record.readings)
    versions = {label: [v["version"] for v in fake_langfuse.state.prompts[PROMPT] if label in v["labels"]]
                for label in ("production", "canary")}  # fmt: skip
    assert (versions["production"], versions["canary"]) == ([labels[0]], [labels[1]])
