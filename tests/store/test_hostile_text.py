"""Text that is legal JSON but not storable as UTF-8 JSON: a lone UTF-16 surrogate (`"\\ud800"`) and a number too
large for a float (`1e400`, which Python reads as infinity). In a dataset they are refused by `validate` with
file:line; in a model's reply they are stored safely (U+FFFD, null) and the item says so. Never a traceback,
never a results line that is not JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.projects import DATASET_IDS, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, request_schema

SURROGATE = "\ud800"


def strict_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL file read as strict UTF-8 and strict JSON (no NaN or Infinity)."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{path} holds {name}, which is not JSON")

    text = path.read_bytes().decode("utf-8", errors="strict")
    return [json.loads(line, parse_constant=refuse) for line in text.splitlines()]


def rewrite_item(project_dir: Path, index: int, change: Callable[[dict[str, Any]], str]) -> tuple[Path, int]:
    """Replace line `index` (0-based) of the smoke dataset by `change(item)` (raw JSON text); return file, line."""
    path = project_dir / "datasets" / "smoke_v1.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[index] = change(json.loads(lines[index]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, index + 1


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (r'"A title \ud800 cut"', r"input.title: a lone UTF-16 surrogate (\ud800)"),
        (r'"\udfff"', r"input.title: a lone UTF-16 surrogate (\udfff)"),
        ("1e400", "input.title: 1e400 is too large for a JSON number"),
    ],
    ids=["high surrogate", "low surrogate", "1e400"],
)
def test_a_dataset_value_that_cannot_be_stored_is_refused_naming_file_line_and_field(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    runs: Runs,
    scripted_server: ScriptedOpenAI,
    raw: str,
    expected: str,
) -> None:
    def with_raw_title(item: dict[str, Any]) -> str:
        item["input"]["title"] = "PLACEHOLDER"
        return json.dumps(item).replace('"PLACEHOLDER"', raw)

    path, line = rewrite_item(project_dir, 2, with_raw_title)

    for command in (("validate",), ("run", "counters", "--no-mlflow")):
        result = scoregate(*command)

        assert result.code == 1, result.output
        assert f"{path}:{line}: {expected}" in result.output, result.output
    assert runs.ids() == [] and scripted_server.requests == []


def test_a_valid_surrogate_pair_is_an_ordinary_character(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs
) -> None:
    def emoji_title(item: dict[str, Any]) -> str:
        item["input"]["title"] = "PLACEHOLDER"
        return json.dumps(item).replace("PLACEHOLDER", r"launch \ud83d\ude80 day")

    rewrite_item(project_dir, 0, emoji_title)

    assert scoregate("validate").code == 0
    assert scoregate("run", "counters", "--no-mlflow", "--limit", "1").code == 0
    assert strict_lines(runs.root / runs.latest() / "results.jsonl")[0]["input"]["title"] == "launch \U0001f680 day"


def test_replies_with_lone_surrogates_are_stored_with_the_replacement_character_and_a_note(
    scoregate: Callable[..., CliResult], runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    default = scripted_server.default_reply

    def hostile(body: dict[str, Any]) -> str:
        if request_schema(body) is not None:  # a judge: its JSON carries an escaped lone surrogate
            return default(body).replace("The summary", "The \\udc80 summary")
        return default(body).replace("## TL;DR\n", f"## TL;DR\nBroken {SURROGATE} text.\n")

    scripted_server.responder = hostile

    result = scoregate("run", "smoke", "--no-mlflow", "--no-cache")

    assert result.code == 0, result.output
    stored = strict_lines(runs.root / runs.latest() / "results.jsonl")
    assert len(stored) == len(DATASET_IDS)
    for record in stored:
        assert "Broken \ufffd text." in record["output"]  # replaced as the reply came in (the judges read it so)
        task = next(call for call in record["calls"] if call["purpose"] == "task")
        assert task["note"] == "1 lone UTF-16 surrogate (not Unicode) stored as U+FFFD in the reply"
        assert any("The \ufffd summary" in (s["comment"] or "") for s in record["scores"]), record["scores"]
        assert all(s["value"] is not None for s in record["scores"] if s["name"] == "faithfulness_score")
        assert "lone UTF-16 surrogates (not Unicode) stored as U+FFFD" in " ".join(record["notes"]), record
    assert runs.summary()["run_metrics"]["error_count"] == 0


def test_a_reply_number_too_large_for_a_float_is_stored_as_null_with_a_note(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    runs: Runs,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Callable[..., None],
) -> None:
    prompt = project_dir / "prompts" / "summarization-catchup.yaml"
    edit_yaml(
        prompt,
        lambda p: p["config"].update(
            response_format={"name": "summary", "schema": {"type": "object", "properties": {"n": {"type": "number"}}}}
        ),
    )
    scripted_server.responder = lambda body: '{"n": 1e400}' if request_schema(body) else "plain"

    result = scoregate("run", "counters", "--no-mlflow", "--no-cache")

    assert result.code == 0, result.output
    stored = strict_lines(runs.root / runs.latest() / "results.jsonl")
    structured = [r for r in stored if isinstance(r["output"], dict)]
    assert structured, stored
    for record in structured:
        assert record["output"] == {"n": None}
        assert any("too large" in note for note in record["notes"]), record
