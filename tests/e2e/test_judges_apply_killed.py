"""kill -9 during `scoregate judges apply`, then a re-run: exactly one evaluator per judge definition."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import point_at

JUDGES = ("ev_actionability_v1", "ev_conciseness_v1", "ev_faithfulness_v1")


def test_an_apply_killed_after_a_create_was_sent_leaves_one_evaluator_per_judge(
    start_scoregate: Callable[..., subprocess.Popen[str]], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLangfuse(server_mode="new") as fake:
        point_at(monkeypatch, fake)
        evals = fake.state.evals
        create, in_flight = evals.create, threading.Event()

        def slow_create(body: dict[str, Any]) -> dict[str, Any]:
            made = create(body)
            if len(evals.evaluators) == 2:  # the second create is stored, and its answer never reaches the client
                in_flight.set()
                time.sleep(5)
            return made

        monkeypatch.setattr(evals, "create", slow_create)
        killed = start_scoregate("judges", "apply", *JUDGES)
        assert in_flight.wait(60), killed.communicate()
        killed.send_signal(signal.SIGKILL)
        killed.wait(10)
        monkeypatch.setattr(evals, "create", create)

        rerun = start_scoregate("judges", "apply", *JUDGES)
        out, err = rerun.communicate(timeout=120)

    assert killed.returncode == -signal.SIGKILL
    assert rerun.returncode == 0, err
    names = sorted(e["name"] for e in evals.evaluators.values())
    assert names == ["actionability_score", "conciseness_score", "faithfulness_score"]
    assert all(len(v) == 1 for v in evals.versions.values())
    assert "1 new" in " ".join(out.split()) and "2 unchanged" in " ".join(out.split())
