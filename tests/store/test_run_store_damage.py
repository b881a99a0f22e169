"""The run store under damage: truncated manifests, corrupt result lines, an unwritable store, damaged files. A
full disk under the real executable is in tests/e2e/test_run_store_full_disk.py."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.errors import ExitCode
from support.projects import DATASET_IDS, CliResult, Runs


@pytest.fixture
def project_dir(canned_project_dir: Path) -> Path:
    """These runs need only canned replies: the project's model is `provider: scripted`, no server."""
    return canned_project_dir


def as_interrupted(runs: Runs, run_id: str, keep: int) -> None:
    """Make a finished run look interrupted after `keep` items."""
    path = runs.root / run_id / "results.jsonl"
    path.write_text("".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:keep]), encoding="utf-8")
    manifest = runs.manifest(run_id)
    (runs.root / run_id / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))


def test_a_truncated_manifest_is_shown_as_damaged_and_the_other_runs_still_list(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    assert scoregate("run", "counters", "--limit", "1", "--no-mlflow").code == 0
    healthy = runs.latest()
    assert scoregate("run", "counters", "--limit", "1", "--no-mlflow").code == 0
    damaged = next(r for r in runs.ids() if r != healthy)
    path = runs.root / damaged / "manifest.json"
    path.write_text(path.read_text(encoding="utf-8")[:200], encoding="utf-8")  # killed mid-write by another tool

    listed = scoregate("runs", "list")

    assert listed.code == 0, listed.output
    assert healthy in listed.output and damaged in listed.output
    assert "damaged" in listed.output
    assert f"damaged: {path}:" in listed.output
    resumed = scoregate("run", "--resume", damaged, "--no-mlflow")
    assert resumed.code == int(ExitCode.ERROR), resumed.output
    assert f"{path}:" in resumed.output and "damaged run file" in resumed.output


def test_a_corrupt_result_line_is_named_and_resume_can_quarantine_it(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    assert scoregate("run", "counters", "--no-cache", "--no-mlflow").code == 0
    run_id = runs.latest()
    as_interrupted(runs, run_id, keep=4)
    path = runs.root / run_id / "results.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    broken_id = json.loads(lines[1])["item_id"]
    lines[1] = lines[1][:80] + "\n"  # a corrupt line in the middle, not a partial last one
    path.write_text("".join(lines), encoding="utf-8")

    refused = scoregate("run", "--resume", run_id, "--no-cache", "--no-mlflow")

    assert refused.code == int(ExitCode.ERROR), refused.output
    assert f"{path}:2: damaged result record" in refused.output
    assert f"scoregate run --resume {run_id} --quarantine" in refused.output
    assert runs.manifest(run_id)["status"] == "interrupted"  # refused before it was marked running

    resumed = scoregate("run", "--resume", run_id, "--no-cache", "--no-mlflow", "--quarantine")

    assert resumed.code == 0, resumed.output
    assert sorted(r["item_id"] for r in runs.results(run_id)) == sorted(DATASET_IDS)
    quarantined = (runs.root / run_id / "results.quarantined.jsonl").read_text(encoding="utf-8")
    assert quarantined == lines[1]
    assert broken_id in [r["item_id"] for r in runs.results(run_id)]


def test_a_run_store_that_cannot_be_created_names_the_path(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs
) -> None:
    (project_dir / "runs").write_text("not a directory", encoding="utf-8")

    result = scoregate("run", "counters", "--no-mlflow")

    assert result.code == int(ExitCode.ERROR), result.output
    assert f"cannot write {project_dir / 'runs'}" in result.output


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_run_store_names_the_path(scoregate: Callable[..., CliResult], project_dir: Path) -> None:
    (project_dir / "runs").mkdir()
    (project_dir / "runs").chmod(0o555)
    try:
        result = scoregate("run", "counters", "--no-mlflow")
    finally:
        (project_dir / "runs").chmod(0o755)

    assert result.code == int(ExitCode.ERROR), result.output
    assert "cannot write" in result.output and "Permission denied" in result.output


DAMAGE = [
    ("results.jsonl removed", "results.jsonl", None, ("runs", "show", "{run}", "--items"),
     "results.jsonl: cannot read the run's results"),
    ("manifest without receipts", "manifest.json", "{}", ("runs", "show", "{run}"),
     "manifest.json: damaged run file: no `receipts` object"),
    ("links.json truncated", "links.json", '{"mlflow_run_id": "ab', ("mlflow-sync", "{run}"),
     "links.json:1:"),
    ("manifest prompts not an object", "manifest.json", '{"run_id": "x", "receipts": {"prompts": ["p"]}}',
     ("mlflow-sync", "{run}"), "manifest.json: damaged run file: `receipts.prompts`"),
    ("invalidation.json truncated", "invalidation.json", '{"valid": fal', ("compare", "{run}", "{run}"),
     "invalidation.json:1:"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("file", "content", "command", "expected"), [row[1:] for row in DAMAGE], ids=[row[0] for row in DAMAGE]
)
def test_a_damaged_run_file_is_named_never_a_traceback(
    scoregate: Callable[..., CliResult],
    runs: Runs,
    file: str,
    content: str | None,
    command: tuple[str, ...],
    expected: str,
) -> None:
    assert scoregate("run", "counters", "--limit", "2", "--no-mlflow").code == 0
    run_id = runs.latest()
    path = runs.root / run_id / file
    if content is None:
        path.unlink()
    else:
        path.write_text(content, encoding="utf-8")

    result = scoregate(*(part.format(run=run_id) for part in command))

    assert result.code == int(ExitCode.ERROR), result.output
    assert f"{runs.root / run_id}/{expected}" in result.output


def test_a_manifest_without_receipts_is_listed_as_damaged(scoregate: Callable[..., CliResult], runs: Runs) -> None:
    assert scoregate("run", "counters", "--limit", "1", "--no-mlflow").code == 0
    run_id = runs.latest()
    (runs.root / run_id / "manifest.json").write_text('{"run_id": "x"}', encoding="utf-8")

    listed = scoregate("runs", "list")

    assert listed.code == 0, listed.output
    assert f"{run_id} damaged" in listed.output and "no `receipts` object" in listed.output


def test_a_summary_with_a_wrong_type_names_the_field_and_how_to_make_it_again(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    run_id = runs.latest()
    path = runs.root / run_id / "summary.json"
    before = json.loads(path.read_text(encoding="utf-8"))
    key = next(k for k, s in before["scores"].items() if s.get("mean") is not None)
    path.write_text(json.dumps({**before, "scores": {**before["scores"], key: {"mean": "high"}}}), encoding="utf-8")

    shown = scoregate("runs", "show", run_id)

    assert shown.code == int(ExitCode.ERROR), shown.output
    message = " ".join(shown.output.split())
    assert f"{path}: damaged run file: `scores.{key}.mean`: 'high' is not int or float" in message
    assert f"delete it and run `scoregate run --resume {run_id}` to make it again" in message
    assert "Traceback" not in shown.output

    path.unlink()
    remade = scoregate("run", "--resume", run_id, "--no-mlflow")

    assert remade.code == 0, remade.output
    assert json.loads(path.read_text(encoding="utf-8"))["scores"] == before["scores"]
