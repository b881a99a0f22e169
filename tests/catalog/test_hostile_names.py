"""Names and ids that are paths, odd or huge are refused where they are read, with a clear error: a run id never
leads outside runs/, a hard-case dataset never outside datasets/, a prompt or evaluator name is one MLflow-safe
word, and a dataset id is bounded (an over-long one stored before still mirrors)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.projects import CliResult, Runs

Edit = Callable[[Path, Callable[[Any], None]], None]


@pytest.fixture
def project_dir(canned_project_dir: Path) -> Path:
    """These runs need only canned replies: the project's model is `provider: scripted`, no server."""
    return canned_project_dir


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` with the hash of its bytes."""
    files = [p for p in root.rglob("*") if p.is_file()]
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.mark.usefixtures("mlflow_store")
def test_a_run_id_that_is_a_path_is_refused_by_every_command_and_nothing_is_written_outside_runs(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, tmp_path: Path
) -> None:
    assert scoregate("run", "counters", "--limit", "2", "--no-mlflow").code == 0
    outside = tmp_path / "outside" / "evil"  # a real run's files, outside the project's runs/
    shutil.copytree(runs.root / runs.latest(), outside)
    (outside / "report.html").unlink()
    before = snapshot(tmp_path / "outside")
    as_path = "../../outside/evil"
    assert (runs.root / as_path / "manifest.json").is_file()  # the path does reach it

    commands = [
        ("report", as_path),
        ("report", runs.latest(), as_path),
        ("runs", "invalidate", as_path, "--reason", "hostile"),
        ("runs", "invalidate", runs.latest(), "--reason", "x", "--superseded-by", as_path),
        ("mlflow-sync", as_path),
        ("run", "counters", "--resume", as_path, "--no-mlflow"),
        ("runs", "show", as_path),
        ("runs", "watch", as_path),
        ("run", "counters", "--resume", str(outside), "--no-mlflow"),
        ("report", "x" * 300),
    ]
    for args in commands:
        result = scoregate(*args)
        assert result.code == 1, args
        assert "not a run id" in result.output and "never a path" in result.output, (args, result.output)
    assert snapshot(tmp_path / "outside") == before
    assert runs.manifest().get("valid", True) is True  # the refused --superseded-by invalidated nothing


def test_hardcases_refuse_a_dataset_that_is_a_path(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, tmp_path: Path
) -> None:
    assert scoregate("run", "counters", "--limit", "2", "--no-mlflow").code == 0
    for dataset in ("../escaped", str(tmp_path / "absolute"), "sub/dir", "..", "with space"):
        result = scoregate("hardcases", "add", runs.latest(), "--where", "word_count > 0", "--dataset", dataset)
        assert result.code == 1, dataset
        assert f"--dataset {dataset!r} is not a usable name" in result.output, result.output
    assert not (project_dir / "escaped.jsonl").exists() and not (tmp_path / "absolute.jsonl").exists()
    assert sorted(p.name for p in (project_dir / "datasets").iterdir()) == ["smoke_v1.jsonl", "smoke_v1.yaml"]
    assert scoregate("hardcases", "add", runs.latest(), "--where", "word_count > 0", "--dataset", "hard-v1.2").code == 0
    assert (project_dir / "datasets" / "hard-v1.2.jsonl").is_file()


@pytest.mark.parametrize("name", ["call summary", "call+summary", "call@summary", "call(summary)", ".hidden"])
def test_a_prompt_or_evaluator_name_mlflow_cannot_take_is_refused_by_validate(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit, name: str
) -> None:
    prompt = project_dir / "prompts" / "summarization-catchup.yaml"
    evaluator = project_dir / "evaluators" / "counters_v1.yaml"
    odd_prompt, odd_evaluator = prompt.with_name(f"{name}.yaml"), evaluator.with_name(f"{name}_v1.yaml")
    prompt.rename(odd_prompt)
    evaluator.rename(odd_evaluator)
    edit_yaml(odd_prompt, lambda p: p.update(name=name))
    edit_yaml(odd_evaluator, lambda e: e.update(name=f"{name}_v1"))

    result = scoregate("validate")

    assert result.code == 1
    for path, bad in ((odd_prompt, name), (odd_evaluator, f"{name}_v1")):
        assert f"{path}: name: {bad!r} is not a usable name: use letters, digits, '_', '-' and '.' only" in (
            result.output
        ), result.output


@pytest.mark.usefixtures("mlflow_store")
def test_a_dataset_id_is_bounded_and_an_over_long_stored_one_still_mirrors_as_an_eval_row(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs
) -> None:
    dataset = project_dir / "datasets" / "smoke_v1.jsonl"
    good = dataset.read_text(encoding="utf-8")
    items = [json.loads(line) for line in good.splitlines()]
    items[1]["id"] = "x" * 5000
    dataset.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")

    refused = scoregate("validate")

    assert refused.code == 1
    assert f"{dataset}:2: id: String should have at most 256 characters" in refused.output, refused.output

    dataset.write_text(good, encoding="utf-8")  # a run stored before ids were bounded: one of its ids is 5,000 long
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    results = runs.root / runs.latest() / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    rows[1]["item_id"] = "x" * 5000
    results.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    synced = scoregate("mlflow-sync", runs.latest(), "--eval-rows")

    assert synced.code == 0, synced.output
    assert f"mlflow: {len(rows)} evaluation rows (one per item)" in synced.output
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    experiment = client.get_experiment_by_name("smoke_v1 (scripted-project)") or client.search_experiments()[0]
    names = sorted(len(t.info.tags["mlflow.traceName"]) for t in client.search_traces([experiment.experiment_id]))
    assert names[-1] == 1000 and len(names) == len(rows)
