"""kill -9 during `scoregate judges promote`, then a re-run: one assignment per rule, one record of the move."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.app.judges_shadow import shadow_judge
from scoregate.app.judges_sync import sync_project_judges
from support.fake_langfuse import FakeLangfuse
from support.judge_canary import HUMAN, JUDGE, Cli, calibrate_baseline, judge_answers, pinned  # noqa: F401
from support.langfuse_env import point_at
from support.projects import Runs
from support.scripted_openai import ScriptedOpenAI


def test_a_promotion_killed_while_a_rule_moves_is_finished_by_a_re_run(
    pinned: Path,  # noqa: F811
    scoregate: Cli,
    runs: Runs,
    scripted_server: ScriptedOpenAI,
    start_scoregate: Callable[..., subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)
    with FakeLangfuse(server_mode="new") as fake:
        point_at(monkeypatch, fake)
        (pinned / "rules").mkdir()
        for name in ("live_a", "live_b"):
            rule = {"name": name, "judges": [JUDGE, "ev_faithfulness_v1"]}
            (pinned / "rules" / f"{name}.yaml").write_text(yaml.safe_dump(rule), encoding="utf-8")
        blue = next(p.evaluator_id for p in sync_project_judges(pinned).plans if p.file == JUDGE)
        judge = pinned / "evaluators" / f"{JUDGE}.yaml"
        judge.write_text(judge.read_text(encoding="utf-8").replace("Judge actionability only;", "Judge strictly;"))
        green = next(p.evaluator_id for p in sync_project_judges(pinned).plans if p.file == JUDGE)
        shadow_judge(pinned, JUDGE)
        evals = fake.state.evals
        patch_rule, in_flight = evals.patch_rule, threading.Event()

        def slow_patch(rule_id: str, body: dict[str, Any]) -> dict[str, Any]:
            moved = patch_rule(rule_id, body)
            in_flight.set()  # the first rule has moved; its answer never reaches the client
            time.sleep(5)
            return moved

        monkeypatch.setattr(evals, "patch_rule", slow_patch)
        killed = start_scoregate("judges", "promote", JUDGE)
        assert in_flight.wait(60), killed.communicate()
        killed.send_signal(signal.SIGKILL)
        killed.wait(10)
        monkeypatch.setattr(evals, "patch_rule", patch_rule)
        half = sorted(a["evaluatorId"] for r in evals.rules.values() for a in r["evaluatorAssignments"])

        rerun = start_scoregate("judges", "promote", JUDGE)
        out, err = rerun.communicate(timeout=120)

    assert killed.returncode == -signal.SIGKILL
    assert green in half and blue in half  # one rule had moved, the other had not
    assert rerun.returncode == 0, err
    for rule in evals.rules.values():
        targets = [a["evaluatorId"] for a in rule["evaluatorAssignments"]]
        assert len(targets) == 2 and targets[0] == green and blue not in targets
    lines = (pinned / "promotions.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["action"] for line in lines] == ["promote"]
    assert "1 rule(s) repointed" in " ".join(out.split())
