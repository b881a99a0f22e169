"""Validation catches it before a run exists: bad bytes, broken rubrics, invalid schemas, duplicate keys,
score keys written twice, malformed placeholders, and `-C` to a missing directory."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.projects import CliResult, Runs, write_yaml
from support.scripted_openai import ScriptedOpenAI

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


def _set_gate(name: str, **fields: Any) -> Callable[[Any], None]:
    return lambda c: next(g for g in c["gates"] if g["name"] == name).update(fields)


CONFIG_ERRORS = [
    ("NaN threshold", _set_gate("tldr_caps_met", threshold=float("nan")), ".threshold: Input should be a finite"),
    ("infinite threshold", _set_gate("tldr_caps_met", threshold=float("inf")), "Input should be a finite number"),
    (
        "two gates of one name",
        lambda c: c["gates"].append({"name": "tldr_caps_met", "metric": "word_count", "op": ">", "threshold": 0}),
        "gates: two gates are named 'tldr_caps_met'; give each gate its own name",
    ),
    (
        "experiment name with a slash",
        lambda c: c["experiments"].update({"nightly/smoke": c["experiments"]["counters"]}),
        "experiments.nightly/smoke: an experiment name becomes part of its run ids",
    ),
    (
        "promotion of an unknown experiment",
        lambda c: c.update(promotion={"summarization-howto": ["counters", "howto"]}),
        "promotion.summarization-howto: no experiment 'howto' under `experiments:`",
    ),
    (
        "base_url with a port out of range",
        lambda c: c["models"]["scripted"].update(base_url="http://127.0.0.1:99999/v1"),
        "models.scripted.base_url: 'http://127.0.0.1:99999/v1' is not a valid URL",
    ),
    (
        "base_url that is not a URL",
        lambda c: c["models"]["scripted"].update(base_url="localhost:8000"),
        "models.scripted.base_url: 'localhost:8000' is not an http(s) URL with a host",
    ),
    (
        "concurrency beyond 1000",
        lambda c: c["settings"].update(concurrency=10**20),
        "settings.concurrency: Input should be less than or equal to 1000",
    ),
    (
        "an evaluator listed twice",
        lambda c: c["experiments"]["counters"]["evaluators"].append("counters_v1"),
        "experiments.counters.evaluators: 'counters_v1' is listed more than once",
    ),
    (
        "calibration of an unknown evaluator",
        _set_gate("tldr_caps_met", requires_calibration={"evaluator": "ev_typo_v1", "floor": 0.5}),
        "gates.tldr_caps_met.requires_calibration.evaluator: no evaluator 'ev_typo_v1'",
    ),
    (
        "route default outside its choices",
        lambda c: c["experiments"]["counters"]["prompt"].update(default="long"),
        "experiments.counters.prompt: route choice 'long' is not one of ['catchup', 'howto']",
    ),
]


@pytest.mark.parametrize(
    ("change", "expected"), [(c, e) for _, c, e in CONFIG_ERRORS], ids=[n for n, *_ in CONFIG_ERRORS]
)
def test_config_errors_are_caught_naming_the_field(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    runs: Runs,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    change: Callable[[Any], None],
    expected: str,
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", change)

    assert_caught_before_any_run(scoregate, runs, scripted_server, f"{project_dir / 'scoregate.yaml'}: ", expected)


def test_a_union_field_reports_only_the_member_that_fits(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["experiments"]["counters"]["prompt"].update(default="long"))

    result = scoregate("validate")

    assert "prompt.str" not in result.output and "function-after" not in result.output, result.output


EVALUATOR_ERRORS = [
    ("judge range NaN", "ev_faithfulness_v1", lambda e: e["score"].update(range=[float("nan"), 5]),
     "llm_judge.score.range.0: Input should be a finite number"),
    ("no kind", "ev_faithfulness_v1", lambda e: e.pop("kind"), "missing `kind:`"),
    ("counter key with a space", "counters_v1", lambda e: e["counters"][0].update(key="word count"),
     "counters.counters.0.key: String should match pattern"),
    ("negative TL;DR cap", "counters_v1", lambda e: next(c for c in e["counters"] if "cap" in c).update(cap=-5),
     "counters.counters.4.cap: Input should be greater than or equal to 1"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "change", "expected"), [row[1:] for row in EVALUATOR_ERRORS], ids=[row[0] for row in EVALUATOR_ERRORS]
)
def test_evaluator_file_errors_are_caught_naming_the_field(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    runs: Runs,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    name: str,
    change: Callable[[Any], None],
    expected: str,
) -> None:
    path = project_dir / "evaluators" / f"{name}.yaml"
    edit_yaml(path, change)

    assert_caught_before_any_run(scoregate, runs, scripted_server, f"{path}: {expected}")


@pytest.mark.parametrize("kind", ["folder", "broken link", "link loop"])
def test_a_dataset_that_is_not_a_regular_file_is_named(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, scripted_server: ScriptedOpenAI, kind: str
) -> None:
    path = project_dir / "datasets" / "smoke_v1.jsonl"
    path.unlink()
    (project_dir / "datasets" / "smoke_v1.yaml").unlink()
    if kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(path if kind == "link loop" else project_dir / "gone.jsonl")

    assert_caught_before_any_run(scoregate, runs, scripted_server, f"{path}: is ", "dataset files must be regular")


def test_a_scoregate_yaml_that_is_a_folder_is_named(scoregate: Callable[..., CliResult], project_dir: Path) -> None:
    config = project_dir / "scoregate.yaml"
    config.unlink()
    config.mkdir()

    result = scoregate("validate")

    assert result.code == 1, result.output
    assert f"{config}: scoregate.yaml is a folder, not a file" in result.output
