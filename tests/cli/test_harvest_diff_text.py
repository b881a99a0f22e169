"""`scoregate harvest`: the proposed diff is production text, printed as data (no control reaches the terminal)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import scoregate.app as facade
from scoregate.app.harvest import Harvest
from support.projects import CliResult

HOSTILE = 'title: "invoice \u202egpj.exe" \x1b[2J\x1b]8;;http://evil\x07click\x1b]8;;\x07 \x9b31m'


def test_the_diff_shows_control_and_bidirectional_characters_as_escapes(
    scoregate: Callable[..., CliResult], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proposed = Harvest("smoke_v1", "smoke", "diverse", "datasets/smoke_v1.jsonl", found=1)
    proposed.items.append({"id": "prod-1"})
    proposed.diff = f"--- datasets/smoke_v1.jsonl\n+++ datasets/smoke_v1.jsonl\n+{HOSTILE}\n"

    def harvest(*_args: Any, **_kwargs: Any) -> Harvest:
        return proposed

    monkeypatch.setattr(facade, "harvest_dataset", harvest)
    result = scoregate("harvest", "smoke_v1")

    assert result.code == 0, result.output
    assert not any(char in result.out for char in "\u202e\x1b\x07\x9b"), repr(result.out)
    assert "\\u202egpj.exe" in result.output and "\\x1b[2J" in result.output, result.output
    assert "+++ datasets/smoke_v1.jsonl\n" in result.out, result.out
