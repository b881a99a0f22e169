"""The run store writes the typed run record at schema version 2 and still reads, shows and rewrites older runs."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from scoregate.store.record import SCHEMA_VERSION
from scoregate.store.run_store import RunStore
from support.projects import CliResult, Runs

OLD_RUNS = Path(__file__).resolve().parents[1] / "runs_before_schema_version"


def test_a_new_run_writes_schema_version_2_and_reads_back_typed(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    assert scoregate("run", "smoke", "--no-mlflow", "--no-langfuse").code == 0
    run_id = runs.latest()
    assert runs.manifest(run_id)["schema_version"] == SCHEMA_VERSION == 2
    summary = runs.summary(run_id)
    assert summary["schema_version"] == 2
    store = RunStore.open(runs.root, run_id)
    manifest = store.manifest_record
    assert (manifest.run_id, manifest.status) == (run_id, "finished")
    assert manifest.receipts.config_hash == runs.manifest(run_id)["receipts"]["config_hash"]
    record = store.summary_record
    assert record is not None and record.schema_version == 2
    assert record.verdict == summary["verdict"]
    assert record.run_metrics["items"] == summary["run_metrics"]["items"]


def test_a_run_written_before_schema_version_reads_shows_and_stays_version_1(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    source = OLD_RUNS / "smoke-repeat-2"
    run_id = json.loads((source / "manifest.json").read_text(encoding="utf-8"))["run_id"]
    directory = runs.root / run_id
    shutil.copytree(source, directory)
    (directory / "results.jsonl").touch()
    store = RunStore.open(runs.root, run_id)
    assert store.manifest_record.schema_version == 1
    record = store.summary_record
    assert record is not None and record.schema_version == 1

    listed = scoregate("runs", "list")
    assert listed.code == 0, listed.output
    assert run_id in listed.output

    shown = scoregate("runs", "show", run_id)
    assert shown.code == 0, shown.output
    assert run_id in shown.output

    # rewriting its summary (invalidation) keeps it a version-1 file with every key it had
    before = runs.summary(run_id)
    assert scoregate("runs", "invalidate", run_id, "--reason", "gold labels had duplicates").code == 0
    after = runs.summary(run_id)
    assert "schema_version" not in after and "schema_version" not in runs.manifest(run_id)
    assert {key: after[key] for key in before} == before
    assert after["invalid_reason"] == "gold labels had duplicates"
