"""`production:` in scoregate.yaml: `scoregate validate` checks each entry and names the file, line and field."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.catalog.production import ProductionWindow
from scoregate.catalog.production_paths import MISSING, PathError, parse_path, read_path
from support.projects import CliResult

GOOD = {
    "filter": {
        "trace_name": "production-app",
        "environment": "production",
        "tags": ["podcast"],
        "prompt": {"name": "summarization-catchup", "label": "production"},
        "window": {"last": "24h"},
    },
    "mapping": {"input": {"title": "$.input.title", "transcript": "$.input.transcript"}},
}

EditYaml = Callable[[Path, Callable[[Any], None]], None]


def _with_production(entry: dict[str, Any]) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        data["production"] = {"counters": entry}

    return change


def test_a_well_formed_section_is_reported_ok(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: EditYaml
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", _with_production(GOOD))
    result = scoregate("validate")
    assert result.code == 0, result.err
    assert "production counters: 2 input fields mapped (trace production-app, env production)" in result.out


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_a_bad_path_an_unknown_field_and_an_unmapped_required_field_name_file_line_and_field(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: EditYaml
) -> None:
    entry = {**GOOD, "mapping": {"input": {"title": "$.input.title[*]", "topic": "$.input.topic"}}}
    edit_yaml(project_dir / "scoregate.yaml", _with_production(entry))
    config = project_dir / "scoregate.yaml"
    result = scoregate("validate")
    assert result.code != 0
    title_line = _line_of(config, "title: $.input.title[*]")
    assert f"{config}:{title_line}: production.counters.mapping.input.title: " in result.err
    assert "cannot read '[*]'" in result.err
    assert (
        f"{config}:{title_line + 1}: production.counters.mapping.input.topic: the dataset's input_schema declares no "
        in (result.err)
    )
    assert "production.counters.mapping.input: the dataset's input_schema requires 'transcript'" in result.err


def test_an_entry_for_no_experiment_and_an_unknown_prompt_are_refused(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: EditYaml
) -> None:
    def change(data: Any) -> None:
        data["production"] = {
            "smoek": GOOD,
            "smoke": {**GOOD, "filter": {"prompt": {"name": "summarisation-catchup"}}},
        }

    edit_yaml(project_dir / "scoregate.yaml", change)
    result = scoregate("validate")
    assert result.code != 0
    assert "production.smoek: no experiment 'smoek' under `experiments:`" in result.err
    assert "did you mean `smoke`?" in result.err
    assert "production.smoke.filter.prompt.name: no prompt 'summarisation-catchup'" in result.err


def test_the_experiment_routing_between_prompts_must_name_the_production_prompt(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: EditYaml
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda d: d.update(production={"smoke": {"mapping": GOOD["mapping"]}}))
    result = scoregate("validate")
    assert result.code != 0
    assert "production.smoke.filter.prompt.name: the experiment routes between prompts" in result.err


def test_a_window_that_is_not_a_duration_is_a_clear_error(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: EditYaml
) -> None:
    entry = {**GOOD, "filter": {"window": {"last": "7 days"}}}
    edit_yaml(project_dir / "scoregate.yaml", _with_production(entry))
    result = scoregate("validate")
    assert result.code != 0
    assert "production.counters.filter.window: " in result.err
    assert "'7 days' is not a duration; write e.g. 30m, 24h or 7d" in result.err


def test_paths_read_keys_positions_and_quoted_keys_and_say_when_missing() -> None:
    trace = {"input": {"title": "T", "turns": ["a", "b"]}, "metadata": {"user id": "u1"}, "output": "x"}
    assert read_path(trace, parse_path("$.input.turns[1]")) == "b"
    assert read_path(trace, parse_path("$.metadata['user id']")) == "u1"
    assert read_path(trace, parse_path("$.output")) == "x"
    assert read_path(trace, parse_path("$.input.missing")) is MISSING
    for bad in ("input.title", "$.trace.id", "$..title", "$.input[0:2]"):
        with pytest.raises(PathError):
            parse_path(bad)


def test_a_window_is_the_last_duration_or_since_until() -> None:
    now = dt.datetime(2026, 11, 29, 12, tzinfo=dt.UTC)
    assert ProductionWindow(last="24h").bounds(now) == (now - dt.timedelta(hours=24), now)
    assert ProductionWindow().bounds(now)[0] == now - dt.timedelta(days=7)
    since = dt.datetime(2026, 11, 1)
    assert ProductionWindow(since=since).bounds(now) == (since.replace(tzinfo=dt.UTC), now)


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        ({"last": "999999999d"}, "'999999999d' is longer than 10 years"),
        ({"last": "0h"}, "'0h' is an empty window"),
        ({"since": "2026-12-01", "until": "2026-11-01"}, "since: 2026-12-01 00:00 UTC is not before until: 2026-11-01"),
        ({"since": "2026-11-01T10:00:00+02:00", "until": "2026-11-01T08:00:00Z"}, "is not before until"),
    ],
)
@pytest.mark.parametrize("command", [["validate"], ["traces", "score", "counters", "--dry-run"]])
def test_a_window_that_selects_no_time_or_overflows_is_a_clear_error(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    edit_yaml: EditYaml,
    window: dict[str, str],
    expected: str,
    command: list[str],
) -> None:
    entry = {**GOOD, "filter": {"window": window}}
    edit_yaml(project_dir / "scoregate.yaml", _with_production(entry))
    result = scoregate(*command)
    assert result.code == 1, result.output
    assert "production.counters.filter.window: " in result.output and expected in result.output, result.output
