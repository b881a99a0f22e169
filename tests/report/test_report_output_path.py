"""`scoregate report RUN -o FILE` where FILE is not a plain file: a named pipe gets the page and stays a pipe (it
was replaced by a regular file before, as /dev/null or /dev/stdout would have been), a folder is refused by name."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from support.projects import CliResult, Runs


def test_a_report_written_to_a_named_pipe_goes_through_it(
    scoregate: Callable[..., CliResult], project_dir: Path, tmp_path: Path
) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    run_id = Runs(project_dir).latest()
    pipe = tmp_path / "report.fifo"
    os.mkfifo(pipe)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text(encoding="utf-8")), daemon=True)
    reader.start()

    result = scoregate("report", run_id, "-o", str(pipe))

    reader.join(timeout=30)
    assert result.code == 0, result.output
    assert stat.S_ISFIFO(pipe.lstat().st_mode)
    assert received and received[0].startswith("<!DOCTYPE html>") and run_id in received[0]


def test_a_report_to_a_folder_is_refused_by_name(
    scoregate: Callable[..., CliResult], project_dir: Path, tmp_path: Path
) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    result = scoregate("report", Runs(project_dir).latest(), "-o", str(tmp_path))
    assert result.code != 0 and f"{tmp_path} is a folder" in result.output, result.output


def test_a_report_never_replaces_a_file_that_is_not_an_html_page(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    run_id = Runs(project_dir).latest()
    config = project_dir / "scoregate.yaml"
    kept = config.read_bytes()

    refused = scoregate("report", run_id, "-o", str(config))

    assert refused.code != 0, refused.output
    assert f"{config}: exists and is not an HTML page" in refused.output, refused.output
    assert config.read_bytes() == kept
    page = project_dir / "page.html"
    for _ in range(2):  # a report written before is replaced
        assert scoregate("report", run_id, "-o", str(page)).code == 0
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_coverage_html_never_replaces_a_file_that_is_not_an_html_page(tmp_path: Path) -> None:
    from scoregate.app.coverage import Coverage, write_html
    from scoregate.errors import ScoregateError

    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n", encoding="utf-8")
    with pytest.raises(ScoregateError, match="exists and is not an HTML page"):
        write_html(Coverage("smoke_v1", "counters", 90), notes)
    assert notes.read_text(encoding="utf-8") == "# notes\n"
