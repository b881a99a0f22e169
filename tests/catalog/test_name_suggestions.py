"""A misspelt name (model, experiment, dataset, YAML field, placeholder) is blamed where it was typed, with the
closest names; a shared gate names the experiment that lacks its metric; one placeholder typo is one error."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.projects import SCOREGATE_BIN, CliResult
from support.scripted_openai import ScriptedOpenAI

Edit = Callable[[Path, Callable[[Any], None]], None]


def add_models(config: dict[str, Any]) -> None:
    """Give the test project the shipped model names beside `scripted` (none is ever called here)."""
    config["models"]["gpt-4o-mini"] = {"provider": "openai", "model": "gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"}
    config["models"]["claude-haiku"] = {"provider": "anthropic", "model": "claude-3-5-haiku-latest"}


def run_executable(project: Path, *args: str, env: dict[str, str] | None = None) -> CliResult:
    """The real `scoregate` executable, as `make experiment` runs it, at 200 columns."""
    done = subprocess.run(
        [str(SCOREGATE_BIN), *args, "-C", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )
    assert "Traceback" not in done.stdout + done.stderr
    return CliResult(done.returncode, done.stdout, done.stderr)


def test_a_model_option_typo_blames_the_option_and_suggests_the_closest_model(
    project_dir: Path, scripted_server: ScriptedOpenAI, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", add_models)

    result = run_executable(project_dir, "run", "smoke", "--model", "gpt4o-mini", "--no-mlflow", "--no-langfuse")

    assert result.code == 1
    assert "--model gpt4o-mini: no such model under `models:`" in result.output
    assert "did you mean `gpt-4o-mini`?" in result.output
    assert "(defined: claude-haiku, gpt-4o-mini, scripted)" in result.output
    assert "experiments.smoke.model" not in result.output and "fix scoregate.yaml" not in result.output
    assert scripted_server.requests == []


def test_a_scoregate_model_typo_names_the_variable_make_passed_as_model(
    project_dir: Path, scripted_server: ScriptedOpenAI, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", add_models)

    # what `SCOREGATE_MODEL=gpt4o-mini make experiment` runs
    result = run_executable(
        project_dir, "run", "smoke", "--model", "gpt4o-mini", "--no-mlflow", env={"SCOREGATE_MODEL": "gpt4o-mini"}
    )

    assert result.code == 1
    assert "SCOREGATE_MODEL=gpt4o-mini (passed as --model): no such model" in result.output
    assert "did you mean `gpt-4o-mini`?" in result.output
    assert "experiments.smoke.model" not in result.output
    assert scripted_server.requests == []


def test_a_judge_model_typo_suggests_the_closest_model(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI
) -> None:
    result = scoregate("run", "smoke", "--judge-model", "scriptd", "--no-mlflow")

    assert result.code == 1
    assert "--judge-model scriptd: no such model" in result.output and "did you mean `scripted`?" in result.output
    assert scripted_server.requests == []


def test_an_experiment_typo_suggests_the_closest_experiment(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI
) -> None:
    result = scoregate("run", "smok", "--no-mlflow")

    assert result.code == 1
    assert "no experiment 'smok' (defined: counters, smoke); did you mean `smoke`?" in result.output
    assert scripted_server.requests == []


def test_a_dataset_typo_in_an_experiment_suggests_the_closest_dataset(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["experiments"]["smoke"].update(dataset="smoke_v2"))

    result = scoregate("validate")

    assert result.code == 1
    assert "experiments.smoke.dataset: no dataset 'smoke_v2'" in result.output
    assert "did you mean `smoke_v1`?" in result.output


def test_unknown_yaml_fields_suggest_the_closest_field_in_every_file_kind(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "evaluators" / "ev_faithfulness_v1.yaml", lambda e: e.update(reasoning_kye="why"))
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["settings"].update(concurency=2))
    edit_yaml(project_dir / "prompts" / "summarization-howto.yaml", lambda p: p["config"].update(temprature=0))

    result = scoregate("validate")

    assert result.code == 1
    assert "ev_faithfulness_v1.yaml: llm_judge.reasoning_kye: unknown field; did you mean `reasoning_key`" in (
        result.output
    )
    assert "scoregate.yaml: settings.concurency: unknown field; did you mean `concurrency`?" in result.output
    assert "summarization-howto.yaml: config.temprature: unknown field; did you mean `temperature`?" in result.output


def test_an_unknown_field_of_a_dataset_item_suggests_the_closest_field(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    path = project_dir / "datasets" / "smoke_v1.jsonl"
    first, *rest = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([json.dumps({**json.loads(first), "metdata": {}}), *rest]) + "\n", encoding="utf-8")

    result = scoregate("validate")

    assert result.code == 1
    assert "smoke_v1.jsonl:1: metdata: unknown field; did you mean `metadata`?" in result.output


def test_a_shared_gate_names_the_experiment_that_does_not_measure_its_metric(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit
) -> None:
    def share_gates(config: dict[str, Any]) -> None:
        config["experiments"]["counters"]["gates"] = config["experiments"]["smoke"]["gates"]

    edit_yaml(project_dir / "scoregate.yaml", share_gates)  # one list object: PyYAML writes an anchor and an alias
    assert "    gates: *id" in (project_dir / "scoregate.yaml").read_text(encoding="utf-8")

    result = scoregate("validate")

    assert result.code == 1
    assert "gates.faithfulness.metric: unknown metric 'faithfulness_score' in experiment 'counters'" in result.output
    assert "experiments.counters.evaluators" in result.output
    assert "in experiment 'smoke'" not in result.output
    assert "this experiment" not in result.output


def test_one_placeholder_typo_is_one_error_with_the_item_count_and_the_first_ids(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI, edit_yaml: Edit
) -> None:
    path = project_dir / "prompts" / "summarization-catchup.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("{{title}}", "{{titel}}"), encoding="utf-8")
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "{{titel}}" in text)

    for command in (("validate",), ("run", "smoke", "--no-mlflow")):
        result = scoregate(*command)

        assert result.code == 1
        assert "1 problem found" in result.output, result.output
        assert result.output.count("{{titel}}") == 1
        assert f"summarization-catchup.yaml:{line}: prompt 'summarization-catchup' uses {{{{titel}}}}" in (
            result.output
        )
        assert "has no `titel`, in 3 items of smoke_v1: smoke-001 (datasets/smoke_v1.jsonl:1), smoke-002" in (
            result.output
        )
        assert "did you mean `title`?" in result.output
    assert [r for r in scripted_server.requests if not r.is_preflight] == []


STORED = ("smoke-20260101-120000-a1b2", "counters-20260102-090000-c3d4")
TYPO = "smoke-20260101-12000-a1b2"
"""A stored id with one digit lost, as a user retypes it from a log."""


def store_runs(project: Path) -> None:
    """Stored runs as far as finding one by its id goes: a directory with a manifest."""
    for run_id in STORED:
        (project / "runs" / run_id).mkdir(parents=True)
        manifest = {"run_id": run_id, "receipts": {"dataset": {"name": "smoke_v1"}}}
        (project / "runs" / run_id / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


RUN_ID_COMMANDS = [
    ("runs", "show", TYPO),
    ("compare", STORED[1], TYPO),
    ("diff", TYPO, STORED[1]),
    ("rank", STORED[1], TYPO),
    ("report", TYPO),
    ("runs", "invalidate", TYPO, "--reason", "typo"),
    ("mlflow-sync", TYPO),
    ("langfuse-sync", TYPO),
    ("hardcases", "add", TYPO, "--where", "word_count < 3"),
    ("runs", "watch", TYPO),
    ("run", "--resume", TYPO, "--no-mlflow"),
]


@pytest.mark.parametrize(
    "command", RUN_ID_COMMANDS, ids=[" ".join(w for w in c[:2] if w not in (*STORED, TYPO)) for c in RUN_ID_COMMANDS]
)
def test_a_run_id_typo_suggests_the_closest_stored_run(
    command: tuple[str, ...], scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    store_runs(project_dir)

    result = scoregate(*command)

    assert result.code == 1, result.output
    assert f"no run '{TYPO}' in {project_dir / 'runs'}; did you mean `{STORED[0]}`?" in result.output
    assert STORED[1] not in result.output.split("did you mean")[1]
    assert "list runs with `scoregate runs list`" in result.output
    assert scripted_server.requests == []


def test_merge_of_a_run_id_typo_suggests_the_sharded_run(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    sharded = project_dir / "runs" / STORED[0] / "shards" / "shard-1-of-2"
    sharded.mkdir(parents=True)

    result = scoregate("merge", TYPO)

    assert result.code == 1, result.output
    shards = project_dir / "runs" / TYPO / "shards"
    assert f"no shards of run {TYPO} in {shards}; did you mean `{STORED[0]}`?" in result.output


@pytest.mark.parametrize("command", [("annotate", "queue"), ("scores", "pull")], ids=["annotate queue", "scores pull"])
def test_a_run_or_dataset_typo_suggests_the_closest_run_or_dataset(
    command: tuple[str, ...], scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    store_runs(project_dir)

    mistyped_run = scoregate(*command, TYPO)
    mistyped_dataset = scoregate(*command, "smoke_v2")

    assert mistyped_run.code == 1 and mistyped_dataset.code == 1
    runs = project_dir / "runs"
    assert f"no run or dataset '{TYPO}' in {runs}; did you mean `{STORED[0]}`?" in mistyped_run.output
    assert f"no run or dataset 'smoke_v2' in {runs}; did you mean `smoke_v1`?" in mistyped_dataset.output


def test_a_run_id_typo_in_a_ratings_file_suggests_the_closest_stored_run(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    store_runs(project_dir)
    ratings = project_dir / "ratings.csv"
    ratings.write_text(f"run_id,item_id,key,value\n{TYPO},smoke-001,human_faithfulness,4\n", encoding="utf-8")

    result = scoregate("scores", "import", str(ratings), "--local-only")

    assert result.code == 1, result.output
    runs = project_dir / "runs"
    assert f"{ratings}:2: run_id: no run '{TYPO}' in {runs}; did you mean `{STORED[0]}`?" in result.output
