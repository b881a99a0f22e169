"""kill -9 during `scoregate judges apply` while rules are created or updated, then a re-run: one rule per rule file
and one assignment per judge of each rule."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import point_at

RULES = {
    "live_a": ["ev_actionability_v1", "ev_faithfulness_v1"],
    "live_b": ["ev_conciseness_v1", "ev_actionability_v1"],
    "live_c": ["ev_faithfulness_v1"],
}


def _write_rules(root: Path, sampling: float) -> None:
    (root / "rules").mkdir(exist_ok=True)
    for name, judges in RULES.items():
        rule = {"name": name, "judges": judges, "sampling": sampling}
        (root / "rules" / f"{name}.yaml").write_text(yaml.safe_dump(rule), encoding="utf-8")


def _kill_in_flight(
    start: Callable[..., subprocess.Popen[str]], monkeypatch: pytest.MonkeyPatch, store: Any, method: str
) -> subprocess.Popen[str]:
    """Start `judges apply`, SIGKILL it once the second call of `store.method` is stored but not yet answered."""
    real, in_flight, calls = getattr(store, method), threading.Event(), []

    def slow(*args: Any) -> dict[str, Any]:
        done = real(*args)
        calls.append(args)
        if len(calls) == 2:  # stored on the server; its answer never reaches the client
            in_flight.set()
            time.sleep(5)
        return done

    monkeypatch.setattr(store, method, slow)
    killed = start("judges", "apply")
    assert in_flight.wait(90), killed.communicate()
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)
    monkeypatch.setattr(store, method, real)
    return killed


def _assert_one_rule_per_file_and_one_assignment_per_judge(store: Any) -> None:
    names = Counter(r["name"] for r in store.rules.values())
    assert names == Counter(f"{name} [scoregate]" for name in RULES)
    by_id = {e["id"]: e["name"] for e in store.evaluators.values()}
    assert len(set(by_id.values())) == len(by_id)  # one evaluator per judge file
    for rule in store.rules.values():
        targets = [a["evaluatorId"] for a in rule["evaluatorAssignments"]]
        judges = RULES[rule["name"].removesuffix(" [scoregate]")]
        assert len(targets) == len(set(targets)) == len(judges)
        assert sorted(by_id[t] for t in targets) == sorted(
            j.removeprefix("ev_").removesuffix("_v1") + "_score" for j in judges
        )
    assert all(len(v) == 1 for v in store.versions.values())


def test_an_apply_killed_while_rules_are_created_and_then_updated_leaves_one_rule_per_file(
    start_scoregate: Callable[..., subprocess.Popen[str]], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLangfuse(server_mode="new") as fake:
        point_at(monkeypatch, fake)
        evals = fake.state.evals
        _write_rules(project_dir, 0.5)
        created = _kill_in_flight(start_scoregate, monkeypatch, evals, "create_rule")
        half_made = len(evals.rules)
        after_create = start_scoregate("judges", "apply")
        _, err_create = after_create.communicate(timeout=120)
        rules_after_create = len(evals.rules)

        _write_rules(project_dir, 0.25)
        patched = _kill_in_flight(start_scoregate, monkeypatch, evals, "patch_rule")
        half_moved = sorted(r["sampling"] for r in evals.rules.values())
        after_patch = start_scoregate("judges", "apply")
        _, err_patch = after_patch.communicate(timeout=120)
        again = start_scoregate("judges", "apply")
        out_again, err_again = again.communicate(timeout=120)

    assert created.returncode == patched.returncode == -signal.SIGKILL
    assert half_made == 2 and half_moved == [0.25, 0.25, 0.5]  # killed half-way each time
    assert after_create.returncode == 0, err_create
    assert rules_after_create == 3
    assert after_patch.returncode == 0, err_patch
    assert sorted(r["sampling"] for r in evals.rules.values()) == [0.25, 0.25, 0.25]
    _assert_one_rule_per_file_and_one_assignment_per_judge(evals)
    assert again.returncode == 0, err_again
    flat = " ".join(out_again.split())
    assert "applied: 0 writes" in flat, out_again
