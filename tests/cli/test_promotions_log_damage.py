"""A damaged `promotions.jsonl` (a line that is not a promotion record, or not UTF-8): `scoregate promotions` names the
file, the line and what to do, exit 1, never a traceback; the regression gates read the good lines."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.app.regression_gate import promotion_records
from support.projects import CliResult

GOOD = {"action": "promote", "prompt": "digest", "label": "production", "version": 2, "time": "2026-11-29T10:00:00"}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"[1]", "not a promotion record: a JSON object with time, action, prompt and label"),
        (b'{"action": 5}', "not a promotion record: a JSON object with time, action, prompt and label"),
        (b"\xff\xfe broken", "not UTF-8"),
    ],
)
def test_a_damaged_line_is_named_with_what_to_do(
    scoregate: Callable[..., CliResult], project_dir: Path, line: bytes, expected: str
) -> None:
    log = project_dir / "promotions.jsonl"
    log.write_bytes(json.dumps(GOOD).encode() + b"\n" + line + b"\n")

    result = scoregate("promotions")

    assert result.code == 1, result.output
    assert f"{log}:2: {expected}" in result.output, result.output
    assert "git" in result.output


def test_the_regression_gates_read_the_good_lines_around_a_line_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "promotions.jsonl").write_bytes(json.dumps(GOOD).encode() + b"\n\xff\xfe broken\n")
    assert promotion_records(tmp_path) == [GOOD]
