"""The typed run record reads every run this version of scoregate wrote, and writes it back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoregate.store.record import SCHEMA_VERSION, Manifest, RunSummary
from scoregate.store.record_files import read_manifest, read_summary
from scoregate.store.run_store import DamagedRun

OLD_RUNS = Path(__file__).resolve().parents[1] / "runs_before_schema_version"
RUN_NAMES = sorted(path.name for path in OLD_RUNS.iterdir())


def _text(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True)


@pytest.mark.parametrize("name", RUN_NAMES)
def test_a_run_written_before_schema_version_reads_and_writes_back_unchanged(name: str) -> None:
    for file, reader in (("manifest.json", read_manifest), ("summary.json", read_summary)):
        path = OLD_RUNS / name / file
        record = reader(path)
        assert record.schema_version == 1
        assert _text(record.to_dict()) == _text(json.loads(path.read_text(encoding="utf-8")))


def test_the_typed_fields_say_what_the_file_says() -> None:
    manifest = read_manifest(OLD_RUNS / "smoke-repeat-2" / "manifest.json")
    summary = read_summary(OLD_RUNS / "smoke-repeat-2" / "summary.json")
    raw = json.loads((OLD_RUNS / "smoke-repeat-2" / "summary.json").read_text(encoding="utf-8"))
    raw_manifest = json.loads((OLD_RUNS / "smoke-repeat-2" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest.options.repeat == raw_manifest["options"]["repeat"] == 2
    assert manifest.receipts.dataset_name() == raw_manifest["receipts"]["dataset"]["name"]
    assert manifest.receipts.model is not None
    assert manifest.receipts.model.name == raw_manifest["receipts"]["model"]["name"]
    assert manifest.receipts.prompt_versions() == summary.prompts
    assert summary.verdict == raw["verdict"]
    assert [gate.status for gate in summary.gates] == [gate["status"] for gate in raw["gates"]]
    faithfulness = summary.score("faithfulness_score")
    assert faithfulness is not None
    assert (faithfulness.mean, faithfulness.ci_low, faithfulness.n_measured) == (
        raw["scores"]["faithfulness_score"]["mean"],
        raw["scores"]["faithfulness_score"]["ci_low"],
        raw["scores"]["faithfulness_score"]["n_measured"],
    )
    assert summary.section("repeats") == raw["repeats"]
    assert summary.score("no such score") is None


def test_a_track_block_and_an_invalidation_are_kept_as_sections() -> None:
    extraction = read_summary(OLD_RUNS / "extraction" / "summary.json")
    assert extraction.section("extraction")["levels"]
    invalidated = read_summary(OLD_RUNS / "counters-invalidated" / "summary.json")
    assert invalidated.section("invalid_reason") == "judge prompt was wrong"


def test_a_new_record_carries_the_schema_version() -> None:
    summary = RunSummary(schema_version=SCHEMA_VERSION, run_id="r1", verdict="pass")
    assert summary.to_dict() == {"schema_version": SCHEMA_VERSION, "run_id": "r1", "verdict": "pass"}
    assert Manifest.model_validate({"run_id": "r1", "receipts": {}}).schema_version == 1


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"run_id": "r", "scores": {"s": {"n_total": "many"}}}', "`scores.s.n_total`"),
        ('{"run_id": "r", "gates": [{"name": "g"}]}', "`gates.0.status`"),
        ('{"scores": {}}', "`run_id`"),
    ],
)
def test_a_damaged_summary_names_the_field(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "summary.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DamagedRun) as caught:
        read_summary(path)
    assert says in str(caught.value) and caught.value.where == str(path)


def test_analysis_builds_the_record_types_and_they_write_every_key_a_summary_had() -> None:
    from scoregate.analysis.gates import evaluate_gate
    from scoregate.analysis.stats import describe
    from scoregate.catalog.config_models import GateSpec
    from scoregate.store.record import GateResult, ScoreStats

    stats = describe([1.0, None, 3.0], resamples=50)
    assert isinstance(stats, ScoreStats)
    assert list(stats.to_dict()) == [
        *("n_total", "n_measured", "coverage", "mean", "median", "std"),
        *("ci_low", "ci_high", "min", "max", "confidence", "ci_method"),
    ]
    assert describe([None]).to_dict()["mean"] is None  # unmeasured: written as null, never left out
    summary = {"scores": {"x": stats.to_dict()}, "run_metrics": {}}
    gate = evaluate_gate(
        GateSpec(name="g", metric="x", stat="every_item", op=">=", threshold=2),
        summary,
        column=[1.0, None, 3.0],
        min_coverage=0.5,
        item_ids=["a", "b", "c"],
    )
    assert isinstance(gate, GateResult)
    assert gate.status == "fail" and gate.failing_items == ["a"]
    assert list(gate.to_dict()) == [
        *("name", "metric", "stat", "op", "threshold", "observed", "coverage", "status", "detail"),
        *("failing_items", "quarantined", "slices"),
    ]
