"""`scoregate rollout status | watch` on a damaged rollout record or a hostile `--scores FILE`: one line naming the
file (and its field or line) and what to do, a non-zero exit, never a traceback, and the record left as it was."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.rollout_monitor import RolloutMonitor
from scoregate.app.rollout import RolloutRequest
from scoregate.app.rollout_record import RolloutRecord, record_path, write_record
from support.projects import CliResult

PROMPT = "feed-digest"


def _live_record(project: Path) -> dict[str, Any]:
    """Write a live rollout record of PROMPT (v2 over v1 at 10%, deciding score `quality` in 0..1); return it."""
    rule = RolloutRequest(version=2, share="10%", metric="quality").rule()
    record = RolloutRecord(
        PROMPT, 2, 1, rule.share, "quality", datetime(2026, 11, 29, tzinfo=UTC).isoformat(),
        monitor=RolloutMonitor.start(rule).to_dict(),
    )  # fmt: skip
    write_record(project, record)
    return record.to_dict()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"state": 5}, "state"),
        ({"state": "paused"}, "state"),
        ({"candidate": "2"}, "candidate"),
        ({"share": "ten"}, "share"),
        ({"started_at": "yesterday"}, "started_at"),
        ({"monitor": "x"}, "monitor"),
        ({"monitor": {"rule": {}}}, "monitor"),
        ({"readings": [1]}, "readings"),
        ({"readings": [{"poll": 1}]}, "readings"),
        ({"sessions": "abc"}, "sessions"),
    ],
)
@pytest.mark.parametrize("command", [["status"], ["status", "--json"], ["watch", PROMPT, "--polls", "1"]])
def test_a_record_with_a_wrong_field_is_one_line_naming_the_field(
    scoregate: Callable[..., CliResult], project_dir: Path, change: dict[str, Any], field: str, command: list[str]
) -> None:
    path = record_path(project_dir, PROMPT)
    damaged = json.dumps({**_live_record(project_dir), **change})
    path.write_text(damaged, encoding="utf-8")
    scores = project_dir / "scores.jsonl"
    scores.write_text("", encoding="utf-8")
    extra = ["--scores", str(scores)] if command[0] == "watch" else []

    result = scoregate("rollout", *command, *extra)

    assert result.code == 1, result.output
    assert f"{path}: the rollout record is damaged" in result.output, result.output
    assert f"field {field}" in result.output and "restore it from a backup" in result.output, result.output
    assert path.read_text(encoding="utf-8") == damaged


def _scores(project: Path, rows: list[Any], tail: bytes = b"") -> Path:
    path = project / "scores.jsonl"
    path.write_bytes(b"".join(json.dumps(row).encode() + b"\n" for row in rows) + tail)
    return path


def test_a_scores_line_that_is_not_utf8_names_its_line_and_counts_nothing(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    before = json.dumps(_live_record(project_dir), indent=1, ensure_ascii=False) + "\n"
    scores = _scores(project_dir, [{"time": 1, "version": 2, "session": "a", "score": 1}], b'{"session": "caf\xe9"}\n')

    result = scoregate("rollout", "watch", PROMPT, "--scores", str(scores), "--polls", "1")

    assert result.code == 1, result.output
    assert f"{scores}: line 2: not UTF-8" in result.output, result.output
    assert record_path(project_dir, PROMPT).read_text(encoding="utf-8") == before


def test_a_score_outside_the_rollouts_range_is_an_error_not_a_traceback(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    before = json.dumps(_live_record(project_dir), indent=1, ensure_ascii=False) + "\n"
    rows = [{"time": 1, "version": 2, "session": "c", "score": 7}]
    rows += [{"time": 2 + i, "version": 1, "session": f"p{i}", "score": 0} for i in range(9)]
    scores = _scores(project_dir, rows)

    result = scoregate("rollout", "watch", PROMPT, "--scores", str(scores), "--polls", "1")

    assert result.code == 1, result.output
    assert "outside the rollout's range" in result.output and "--range" in result.output, result.output
    assert record_path(project_dir, PROMPT).read_text(encoding="utf-8") == before


def test_a_rollout_of_a_prompt_in_a_langfuse_folder_is_listed_by_status(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    rule = RolloutRequest(version=2, share="10%", metric="quality").rule()
    started = datetime(2026, 11, 29, tzinfo=UTC).isoformat()
    monitor = RolloutMonitor.start(rule).to_dict()
    write_record(project_dir, RolloutRecord("team/digest", 2, 1, rule.share, "quality", started, monitor=monitor))

    listed = scoregate("rollout", "status")
    one = scoregate("rollout", "status", "team/digest")

    assert listed.code == one.code == 0, listed.output + one.output
    assert "team/digest: live; canary v2 at 10%, production v1" in listed.output, listed.output
    assert "team/digest: live" in one.output


@pytest.mark.parametrize("name", ["../../outside", "/etc/passwd", "a/../../b"])
def test_a_prompt_name_that_climbs_out_of_the_rollouts_folder_is_refused(
    scoregate: Callable[..., CliResult], project_dir: Path, name: str
) -> None:
    result = scoregate("rollout", "status", name)
    assert result.code == 1, result.output
    assert f"{name!r} is not a prompt name" in result.output, result.output
