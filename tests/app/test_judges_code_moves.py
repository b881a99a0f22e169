"""A counters file's code evaluator in the blue/green commands: nothing to shadow, a promotion only with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoregate.app.judges_shadow import shadow_judge
from scoregate.errors import ScoregateError


def test_shadow_of_a_counters_file_says_there_is_no_judge_to_compare(project_dir: Path) -> None:
    with pytest.raises(ScoregateError) as refused:
        shadow_judge(project_dir, "counters_v1")

    message = refused.value.message
    assert message.startswith("counters_v1 is a counters file: its code evaluator is deterministic")
    assert "JudgeBody" not in message
