"""`--last` of `traces score`, `harvest` and `coverage`: a window that is not a duration, holds no time or overflows
the calendar is one line naming the option and what to write, exit 2 — never a pydantic traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.projects import CliResult

ENTRY = {
    "filter": {"trace_name": "production-app", "window": {"last": "24h"}},
    "mapping": {"input": {"title": "$.input.title", "transcript": "$.input.transcript"}},
}


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        ("abc", "--last abc: not a duration; write e.g. 30m, 24h or 7d"),
        ("0h", "--last 0h: an empty window; write e.g. 30m, 24h or 7d"),
        ("99999999999d", "--last 99999999999d: longer than 10 years"),
    ],
)
@pytest.mark.parametrize(
    "command", [["traces", "score", "counters", "--dry-run"], ["harvest", "smoke_v1"], ["coverage", "smoke_v1"]]
)
def test_a_bad_last_window_is_one_line_naming_the_option(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
    command: list[str],
    last: str,
    expected: str,
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda data: data.update(production={"counters": ENTRY}))
    result = scoregate(*command, "--last", last)
    assert result.code == 2, result.output
    assert f"error: {expected}" in result.output, result.output
