"""`scoregate replay` at 80 columns: its words agree with its numbers (one item)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import scoregate.app as facade
from scoregate.app.replay_record import Replay
from support.projects import CliResult


def test_a_replay_of_one_item_says_one_item(
    scoregate: Callable[..., CliResult], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replayed = Replay(
        "catchup", "summarization-catchup@1", "summarization-catchup@local-e75f6452", "cand-1", "logged-1",
        items=1, wins=0, losses=0, ties=1, win_rate=0.5, ci_low=0.05, ci_high=0.95,
    )  # fmt: skip

    def replay(*_args: Any, **_kwargs: Any) -> Replay:
        return replayed

    monkeypatch.setattr(facade, "replay_experiment", replay)
    result = scoregate("replay", "catchup", "--production", "1")

    assert result.code == 0, result.output
    assert "1 item: the candidate won 0, lost 0, tied 1" in result.output, result.output
    assert replayed.rate_words().endswith("over 1 item")
