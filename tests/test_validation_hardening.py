"""Validation catches it before a run exists: bad bytes, broken rubrics, invalid schemas, duplicate keys,
score keys written twice, malformed placeholders, and `-C` to a missing directory."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import CliResult, Runs, write_yaml
from scripted_openai import ScriptedOpenAI

Edit = Callable[[Path, Callable[[Any], None]], None]


def assert_caught_before_any_run(
    scoregate: Callable[..., CliResult], runs: Runs, server: ScriptedOpenAI, *phrases: str
) -> None:
    """`validate` and `run` both exit 1 naming each phrase; no run directory and no model call."""
    for args in (("validate",), ("run", "counters", "--no-mlflow")):
        result = scoregate(*args)
        assert result.code == 1, result.output
        for phrase in phrases:
            assert phrase in result.output, f"{args}: {phrase!r} not in {result.output!r}"
    assert runs.ids() == []
    assert server.requests == []


def test_a_dataset_byte_that_is_not_utf8_is_named_by_file_and_line(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    path = project_dir / "datasets" / "smoke_v1.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b"the", b"th\xff", 1)
    path.write_bytes(b"".join(lines))

    assert_caught_before_any_run(scoregate, runs, scripted_server, f"{path}:3: not UTF-8 (byte 0xff at column")


def test_a_yaml_byte_that_is_not_utf8_is_named_by_file_and_line(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    path = project_dir / "prompts" / "summarization-catchup.yaml"
    text = path.read_bytes()
    line = text[: text.index(b"{{title}}")].count(b"\n") + 1
    path.write_bytes(text.replace(b"{{title}}", b"{{title}} \xe9", 1))

    assert_caught_before_any_run(scoregate, runs, scripted_server, f"{path}:{line}: not UTF-8 (byte 0xe9")


RUBRIC_ERRORS = [
    ("range min > max", lambda e: e["score"].update(range=[5, 1]), "score.range: field 'faithfulness_score'"),
    (
        "unknown variable",
        lambda e: e.update(prompt=e["prompt"] + "\n{{episode}}\n"),
        "prompt: uses {{episode}} but `variables:` has no 'episode'",
    ),
    (
        "unknown source",
        lambda e: e["variables"].update(transcript="inputs.transcript"),
        "variables.transcript: reads unknown source 'inputs.transcript'",
    ),
    (
        "categorical without categories",
        lambda e: e["extra"][0].update(data_type="categorical"),
        "extra.0.categories: categorical field 'hallucination_count' needs `categories:`",
    ),
    (
        "malformed placeholder",
        lambda e: e.update(prompt=e["prompt"].replace("{{summary}}", "{{summary}")),
        "prompt: malformed placeholder near",
    ),
]


@pytest.mark.parametrize(
    ("change", "expected"), [(c, e) for _, c, e in RUBRIC_ERRORS], ids=[n for n, *_ in RUBRIC_ERRORS]
)
def test_judge_rubric_errors_are_caught_at_planning_naming_file_and_field(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    runs: Runs,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    change: Callable[[Any], None],
    expected: str,
) -> None:
    edit_yaml(project_dir / "evaluators" / "ev_faithfulness_v1.yaml", change)
    edit_yaml(
        project_dir / "scoregate.yaml",
        lambda c: c["experiments"]["counters"]["evaluators"].append("ev_faithfulness_v1"),
    )

    path = project_dir / "evaluators" / "ev_faithfulness_v1.yaml"
    assert_caught_before_any_run(scoregate, runs, scripted_server, f"{path}: {expected}")


def test_an_invalid_json_schema_in_a_dataset_file_names_the_file_and_keyword(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, scripted_server: ScriptedOpenAI, edit_yaml: Edit
) -> None:
    path = project_dir / "datasets" / "smoke_v1.yaml"
    edit_yaml(path, lambda meta: meta.update(input_schema={"type": "object", "properties": {"title": {"type": 12}}}))

    assert_caught_before_any_run(
        scoregate, runs, scripted_server,
        f"{path}: input_schema: invalid JSON Schema at properties/title/type (keyword `type`)",
    )  # fmt: skip


def test_duplicate_yaml_keys_are_rejected_with_their_lines(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    path = project_dir / "scoregate.yaml"
    text = path.read_text(encoding="utf-8")
    assert "\nexperiments:\n" in text
    duplicate = "  counters:\n    dataset: smoke_v1\n    prompt: summarization-howto\n"
    text = text.replace("\nexperiments:\n", "\nexperiments:\n" + duplicate, 1)
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    first = lines.index("  counters:") + 1
    second = lines.index("  counters:", first) + 1

    assert_caught_before_any_run(
        scoregate, runs, scripted_server, f"{path}:{second}: duplicate key 'counters' (first on line {first})"
    )


def test_two_evaluators_writing_one_score_key_are_rejected(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, scripted_server: ScriptedOpenAI, edit_yaml: Edit
) -> None:
    source = project_dir / "evaluators" / "counters_v1.yaml"
    copy = project_dir / "evaluators" / "counters_copy.yaml"
    shutil.copy(source, copy)
    edit_yaml(copy, lambda e: e.update(name="counters_copy"))
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["experiments"]["counters"]["evaluators"].append(copy.stem))

    assert_caught_before_any_run(
        scoregate, runs, scripted_server, "score key 'word_count' is written by both counters_v1", "and counters_copy"
    )


def test_a_malformed_placeholder_in_a_prompt_is_flagged(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    path = project_dir / "prompts" / "summarization-howto.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    write_yaml(path, data)
    path.write_text(path.read_text(encoding="utf-8").replace("{{title}}", "{{title}", 1), encoding="utf-8")

    assert_caught_before_any_run(scoregate, runs, scripted_server, f"{path}: malformed placeholder near", "{{title}")


def test_project_option_to_a_missing_directory_is_refused(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    missing = project_dir / "runs-typo"

    result = scoregate("validate", project=missing)

    assert result.code == 1, result.output
    assert f"-C/--project {missing} does not exist" in result.output
    assert "ok experiment" not in result.output  # the parent project was not used instead
