"""A track declares the model of its block in summary.json; the record reads the block through it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.catalog.evaluators import EvaluatorKind
from scoregate.store.record_base import Record
from scoregate.store.record_files import read_summary
from scoregate.store.run_files import DamagedRun
from scoregate.store.run_store import RunStore
from scoregate.tracks.base import Track
from scoregate.tracks.extraction.section import ExtractionSection
from scoregate.tracks.registry import all_tracks, track_section
from support.projects import CliResult, Runs

OLD_RUNS = Path(__file__).resolve().parents[1] / "runs_before_schema_version"
EXTRACTION = next(t for t in all_tracks() if t.name == "extraction")


def _copy(runs: Runs, name: str) -> tuple[str, Path]:
    source = OLD_RUNS / name
    run_id = json.loads((source / "manifest.json").read_text(encoding="utf-8"))["run_id"]
    shutil.copytree(source, runs.root / run_id)
    (runs.root / run_id / "results.jsonl").touch()
    return run_id, runs.root / run_id


def test_the_extraction_block_reads_through_the_tracks_model_and_writes_back_unchanged(runs: Runs) -> None:
    run_id, directory = _copy(runs, "extraction")
    store = RunStore.open(runs.root, run_id)
    summary = store.summary_record
    assert summary is not None
    raw = json.loads((directory / "summary.json").read_text(encoding="utf-8"))["extraction"]

    block = track_section(store, summary, EXTRACTION)

    assert isinstance(block, ExtractionSection)
    assert (block.items, block.scored, block.level_reached) == (raw["items"], raw["scored"], raw["level_reached"])
    assert block.metrics["eqs"] == raw["metrics"]["eqs"] and sorted(block.levels) == sorted(raw["levels"])
    assert json.dumps(block.to_dict(), indent=2) == json.dumps(raw, indent=2)


def test_a_wrong_type_in_a_track_block_names_the_run_file_and_field(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    run_id, directory = _copy(runs, "extraction")
    path = directory / "summary.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["extraction"]["items"] = "fifty-six"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    store = RunStore.open(runs.root, run_id)
    summary = store.summary_record
    assert summary is not None

    with pytest.raises(DamagedRun) as damaged:
        track_section(store, summary, EXTRACTION)
    assert damaged.value.where == str(path) and "`extraction.items`" in damaged.value.message

    report = scoregate("report", run_id)
    assert report.code == 1, report.output
    assert "`extraction.items`" in report.output and "summary.json" in report.output
    assert "Traceback" not in report.output


def test_a_block_without_a_model_reads_as_plain_data(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"run_id": "r", "brevity": {"words": 12, "note": "short"}}), encoding="utf-8")
    summary = read_summary(path)
    store = RunStore(tmp_path)
    plain = Track(name="brevity", kind=EXTRACTION.kind, report=EXTRACTION.report, title="Brevity")
    assert isinstance(plain.kind, EvaluatorKind)

    block = track_section(store, summary, plain)

    assert summary.section("brevity") == {"words": 12, "note": "short"}
    assert type(block) is Record and block.to_dict() == {"words": 12, "note": "short"}
    assert track_section(store, summary, EXTRACTION) is None  # the run has no extraction block
