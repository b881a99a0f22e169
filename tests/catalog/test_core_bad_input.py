"""Bad input gets one clear message naming the file, line or field, a non-zero exit, no traceback, no model call."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.ports import free_port
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Edit = Callable[[Path, Callable[[Any], None]], None]


def dataset_lines(project: Path) -> list[str]:
    return (project / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def write_dataset(project: Path, lines: list[str]) -> None:
    (project / "datasets" / "smoke_v1.jsonl").write_text("".join(lines), encoding="utf-8")


def assert_rejected(result: CliResult, server: ScriptedOpenAI, *expected: str) -> None:
    """Exit 1, every expected phrase in the message, and not one request reached the model (the one-token model
    check is sent only after every item is checked)."""
    assert result.code == 1, result.output
    assert result.output.startswith("error:") or " error: " in f" {result.output}", result.output
    for phrase in expected:
        assert phrase in result.output, f"{phrase!r} not in {result.output!r}"
    assert server.requests == []


COMMANDS = [("validate",), ("run", "smoke", "--no-mlflow")]


@pytest.mark.parametrize("command", COMMANDS, ids=["validate", "run"])
def test_malformed_jsonl_line_is_named_by_file_and_line(
    command: tuple[str, ...], scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    lines = dataset_lines(project_dir)
    lines.insert(2, '{"id": "broken", "input": {"title": "half a line"\n')
    write_dataset(project_dir, lines)

    result = scoregate(*command)

    assert_rejected(result, scripted_server, f"{project_dir / 'datasets' / 'smoke_v1.jsonl'}:3", "not valid JSON")


@pytest.mark.parametrize("command", COMMANDS, ids=["validate", "run"])
def test_duplicate_item_ids_name_both_lines(
    command: tuple[str, ...], scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    lines = dataset_lines(project_dir)
    write_dataset(project_dir, [*lines, lines[0]])

    result = scoregate(*command)

    assert_rejected(result, scripted_server, "smoke_v1.jsonl:7: duplicate item id 'smoke-001' (first on line 1)")


@pytest.mark.parametrize("command", COMMANDS, ids=["validate", "run"])
def test_unknown_template_variable_names_prompt_item_and_fix(
    command: tuple[str, ...],
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
) -> None:
    def add_variable(prompt: dict[str, Any]) -> None:
        prompt["messages"][1]["content"] += "\nWrite for {{audience}}.\n"

    edit_yaml(project_dir / "prompts" / "summarization-catchup.yaml", add_variable)

    result = scoregate(*command)

    assert_rejected(
        result,
        scripted_server,
        "smoke-001 (datasets/smoke_v1.jsonl:1)",  # one error for the 3 catch-up items, the first named by file:line
        "prompt 'summarization-catchup' uses {{audience}} but the item's input has no `audience`",
        "prompts/summarization-catchup.yaml",
    )


def test_prompt_file_missing_a_required_field_names_file_and_field(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "prompts" / "summarization-howto.yaml", lambda prompt: prompt.pop("type"))

    result = scoregate("run", "smoke", "--no-mlflow")

    assert_rejected(
        result, scripted_server, f"{project_dir / 'prompts' / 'summarization-howto.yaml'}: type: Field required"
    )


def test_evaluator_of_unknown_kind_names_file_and_the_known_kinds(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    (project_dir / "evaluators" / "ev_regex_v1.yaml").write_text("kind: regex_judge\nname: ev_regex_v1\nversion: 1\n")

    result = scoregate("validate")

    assert_rejected(
        result, scripted_server, "evaluators/ev_regex_v1.yaml", "'regex_judge'", "'kind'", "'llm_judge', 'counters'"
    )


def test_judge_without_range_shows_the_whole_message_brackets_included(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "evaluators" / "ev_conciseness_v1.yaml", lambda spec: spec["score"].pop("range"))

    result = scoregate("validate")

    assert_rejected(
        result, scripted_server, "evaluators/ev_conciseness_v1.yaml", "a numeric judge score needs `range: [min, max]`"
    )


def test_gate_naming_an_unknown_metric_lists_what_the_experiment_measures(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI, edit_yaml: Edit
) -> None:
    def add_gate(config: dict[str, Any]) -> None:
        config["gates"].append({"name": "recall_gate", "metric": "recall", "op": ">=", "threshold": 0.5})
        config["experiments"]["smoke"]["gates"].append("recall_gate")

    edit_yaml(project_dir / "scoregate.yaml", add_gate)

    result = scoregate("run", "smoke", "--no-mlflow")

    assert_rejected(
        result,
        scripted_server,
        "scoregate.yaml: gates.recall_gate.metric: unknown metric 'recall'",
        "faithfulness_score",
    )


def test_unreachable_endpoint_names_the_url_and_what_to_check(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.down()

    result = scoregate("run", "smoke", "--no-mlflow")

    assert_rejected(result, scripted_server, f"cannot reach {scripted_server.url}", "check base_url")
    assert runs.ids() == [], "an unreachable endpoint must not leave an empty run behind"


def test_unreachable_local_model_says_how_to_start_it(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = free_port()
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(port))
    edit_yaml(
        project_dir / "scoregate.yaml",
        lambda config: config["models"].update(local={"provider": "local", "model": "smollm2-135m"}),
    )

    result = scoregate("run", "smoke", "--model", "local", "--no-mlflow")

    assert_rejected(result, scripted_server, f"cannot reach http://127.0.0.1:{port}/v1", "scoregate model serve")


def test_reply_that_is_not_the_required_json_fails_only_that_item(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    runs: Runs,
) -> None:
    schema = {
        "type": "object",
        "properties": {"tldr": {"type": "string"}, "topics": {"type": "array", "items": {"type": "string"}}},
        "required": ["tldr", "topics"],
    }
    prompt = {
        "name": "extract-topics",
        "type": "chat",
        "messages": [{"role": "user", "content": "List the topics of {{title}}:\n{{transcript}}"}],
        "config": {"temperature": 0, "response_format": {"name": "topics", "schema": schema}},
    }
    (project_dir / "prompts" / "extract-topics.yaml").write_text(json.dumps(prompt), encoding="utf-8")
    edit_yaml(
        project_dir / "scoregate.yaml",
        lambda config: config["experiments"].update(
            topics={"dataset": "smoke_v1", "prompt": "extract-topics", "evaluators": ["counters_v1"]}
        ),
    )

    def responder(body: dict[str, Any]) -> str:
        if "Open Models Weekly" in body["messages"][0]["content"]:
            return "Sure! The topics are licensing and benchmarks."
        return scripted_server.default_reply(body)

    scripted_server.responder = responder

    result = scoregate("run", "topics", "--no-mlflow")

    assert result.code == 0
    results = {r["item_id"]: r for r in runs.results()}
    assert len(results) == 6
    bad = results["smoke-001"]
    assert bad["output"] is None
    assert "not the JSON the prompt requires" in bad["error"]
    assert bad["raw_output"] == "Sure! The topics are licensing and benchmarks."
    assert bad["scores"] and all(s["value"] is None for s in bad["scores"])
    assert all(s["reason"].startswith("no output to score: ") for s in bad["scores"])
    good = results["smoke-002"]
    assert good["error"] is None
    assert isinstance(good["output"], dict) and set(good["output"]) == {"tldr", "topics"}
    metrics = runs.summary()["run_metrics"]
    assert (metrics["items"], metrics["error_count"]) == (6, 1)
    reasons = runs.summary()["scores"]["word_count"]["null_reasons"]
    assert any(reason.startswith("no output to score: ") for reason in reasons)


DATASET_LINE_ERRORS = [
    ("NaN", '{"id": "x", "input": {"title": "t", "transcript": "w", "desired_style": "catchup", "cap": NaN}}',
     "NaN is not a JSON number (JSON has no NaN or Infinity)"),
    ("Infinity", '{"id": "x", "input": {"title": "t", "transcript": "w", "desired_style": "howto", "n": -Infinity}}',
     "-Infinity is not a JSON number"),
    ("deep nesting", '{"id": "x", "input": {"title": "t", "transcript": "w", "x": ' + "[" * 100_000 + "]" * 100_000
     + "}}", "nested too deeply to read"),
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS, ids=["validate", "run"])
@pytest.mark.parametrize(
    ("line", "expected"), [row[1:] for row in DATASET_LINE_ERRORS], ids=[row[0] for row in DATASET_LINE_ERRORS]
)
def test_a_dataset_line_json_cannot_hold_is_named_by_file_and_line(
    command: tuple[str, ...],
    line: str,
    expected: str,
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
) -> None:
    lines = dataset_lines(project_dir)
    write_dataset(project_dir, [*lines[:2], line + "\n", *lines[2:]])

    result = scoregate(*command)

    assert_rejected(result, scripted_server, f"{project_dir / 'datasets' / 'smoke_v1.jsonl'}:3: {expected}")


def test_a_dataset_saved_with_a_byte_order_mark_is_read(scoregate: Callable[..., CliResult], project_dir: Path) -> None:
    path = project_dir / "datasets" / "smoke_v1.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())

    result = scoregate("validate")

    assert result.code == 0, result.output
    assert f"dataset smoke_v1: {len(dataset_lines(project_dir))} items" in result.output


def test_a_schema_violation_is_reported_once_with_its_schema_file(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    lines = dataset_lines(project_dir)
    item = json.loads(lines[0])
    item["input"]["max_words_tldr"] = "sixty"
    write_dataset(project_dir, [json.dumps(item) + "\n", *lines[1:]])

    result = scoregate("validate")

    assert_rejected(result, scripted_server, "smoke_v1.jsonl:1: input.max_words_tldr: 'sixty' is not of type")
    assert result.output.count("'sixty' is not of type 'integer'") == 1, result.output
    assert "1 problem found" in result.output


def test_a_reply_schema_the_items_lack_is_caught_before_any_call(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI, edit_yaml: Edit
) -> None:
    prompt = {
        "name": "extract",
        "type": "chat",
        "messages": [{"role": "user", "content": "Extract from {{transcript}}"}],
        "config": {"response_format": {"name": "facts", "schema_from": "input.schema"}},
    }
    (project_dir / "prompts" / "extract.yaml").write_text(json.dumps(prompt), encoding="utf-8")
    edit_yaml(
        project_dir / "scoregate.yaml",
        lambda c: c["experiments"].update(extract={"dataset": "smoke_v1", "prompt": "extract"}),
    )

    result = scoregate("run", "extract", "--no-mlflow")

    assert_rejected(
        result,
        scripted_server,
        "smoke_v1.jsonl:1: item 'smoke-001': prompt 'extract' takes its reply schema from input.schema",
        "fix `schema_from:` in prompts/extract.yaml",
    )


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("OPENAI_BASE_URL", "http://127.0.0.1:99999/v1", "OPENAI_BASE_URL: 'http://127.0.0.1:99999/v1' is not a valid"),
        ("SCOREGATE_LOCAL_PORT", "eighty", "SCOREGATE_LOCAL_PORT is 'eighty', not a TCP port"),
    ],
    ids=["OPENAI_BASE_URL", "SCOREGATE_LOCAL_PORT"],
)
def test_a_bad_endpoint_variable_is_named_before_any_call(
    variable: str,
    value: str,
    expected: str,
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    monkeypatch: pytest.MonkeyPatch,
    runs: Runs,
) -> None:
    monkeypatch.setenv(variable, value)
    edit_yaml(
        project_dir / "scoregate.yaml",
        lambda c: c["models"].update(
            other={"provider": "openai", "model": "m", "api_key_env": "SCRIPTED_KEY"},
            local={"provider": "local", "model": "smollm2-135m"},
        ),
    )
    monkeypatch.setenv("SCRIPTED_KEY", "k")

    model = "other" if variable == "OPENAI_BASE_URL" else "local"
    result = scoregate("run", "counters", "--model", model, "--no-mlflow")

    assert_rejected(result, scripted_server, expected)
    assert runs.ids() == []


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--models", ","), "name at least one model"),
        (("--models", "scripted, scripted"), "scripted named more than once"),
        (("--concurrency", "100000000000000000000"), "less than or equal to 1000"),
        (("--repeat", "100000000000000000000"), "less than or equal to 100"),
    ],
    ids=["models-empty", "models-twice", "concurrency-huge", "repeat-huge"],
)
def test_run_options_out_of_bounds_are_usage_errors(
    args: tuple[str, ...], expected: str, scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI
) -> None:
    result = scoregate("run", "counters", *args, "--no-mlflow")

    assert result.code == 2, result.output
    assert expected in result.output
    assert scripted_server.requests == []


BROKEN_JSON_LINES = [
    ("cut off", None, "not valid JSON: the line ends at column 200 inside an unclosed string (was it cut off?)"),
    ("cut off between keys", '{"id": "x", "input": {"title": "t"},',
     "not valid JSON: the line ends at column 36 before the JSON value is complete (was it cut off?)"),
    ("missing comma", '{"id": "x" "input": {}}', 'not valid JSON: a comma is missing at column 12'),
    ("trailing comma", '{"id": "x", "input": {"title": "t"},}',
     "not valid JSON: a comma before the } at column 37 has nothing after it (JSON allows no trailing comma)"),
    ("single quotes", "{'id': 'x'}",
     "not valid JSON: a string in single quotes at column 2 (JSON needs double quotes)"),
    ("raw tab", '{"id": "x", "input": {"title": "a\tb"}}',
     "not valid JSON: a tab inside a string at column 34 (write it as \\t)"),
    ("two objects", '{"id": "x"} {"id": "y"}',
     "not valid JSON: more text after the JSON value, from column 13 (one JSON object per line)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "expected"), [row[1:] for row in BROKEN_JSON_LINES], ids=[r[0] for r in BROKEN_JSON_LINES]
)
def test_a_broken_json_line_says_in_words_what_is_wrong_and_where(
    line: str | None,
    expected: str,
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
) -> None:
    lines = dataset_lines(project_dir)
    broken = lines[2][:200] if line is None else line  # None: the third item cut off after 200 characters

    write_dataset(project_dir, [*lines[:2], broken + "\n", *lines[3:]])
    result = scoregate("validate")

    assert_rejected(result, scripted_server, f"{project_dir / 'datasets' / 'smoke_v1.jsonl'}:3: {expected}")
    assert "each line must be one JSON object; fix or remove this line" in result.output
    assert " at at " not in result.output and "Expecting" not in result.output


@pytest.mark.parametrize("command", COMMANDS, ids=["validate", "run"])
def test_an_item_without_input_is_named_by_file_line_and_id(
    command: tuple[str, ...], scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    lines = dataset_lines(project_dir)
    lines[2] = json.dumps({"id": "no-input", "expected_output": "x"}) + "\n"
    lines[3] = json.dumps({"expected_output": "y"}) + "\n"  # no id either: file and line are all there is
    write_dataset(project_dir, lines)

    result = scoregate(*command)

    dataset = project_dir / "datasets" / "smoke_v1.jsonl"
    assert_rejected(result, scripted_server, f"{dataset}:3: input: Field required (item 'no-input')")
    if command == ("validate",):
        assert f"{dataset}:4: input: Field required → every" in result.output
    assert "every item needs an `input` object" in result.output
