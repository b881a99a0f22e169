"""The blocks a feature adds to the run record read as types, and write back byte for byte.

`tests/store/runs_with_sections/` holds the manifest.json and summary.json of runs scoregate wrote before these blocks
had types (a stop-early run, one continued to the full dataset, a run with flaky items, a merged run and one of
its shards): each reads as the typed record and dumps, as the store dumps it, to the very bytes of the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoregate.store.record import Manifest, RunSummary
from scoregate.store.record_files import read_manifest, read_summary

RUNS = Path(__file__).parent / "runs_with_sections"
OLD_RUNS = Path(__file__).resolve().parents[1] / "runs_before_schema_version"
FILES = sorted(path.relative_to(RUNS).as_posix() for path in RUNS.glob("*/*.json"))
OLD_FILES = sorted(path.relative_to(OLD_RUNS).as_posix() for path in OLD_RUNS.glob("*/*.json"))


def _read(name: str) -> Manifest | RunSummary:
    path = RUNS / name
    return read_manifest(path) if path.name == "manifest.json" else read_summary(path)


@pytest.mark.parametrize("name", FILES)
def test_a_run_with_sections_writes_back_byte_for_byte(name: str) -> None:
    text = (RUNS / name).read_text(encoding="utf-8")

    assert json.dumps(_read(name).to_dict(), indent=2, ensure_ascii=False) == text


@pytest.mark.parametrize("name", OLD_FILES)
def test_a_run_from_before_schema_version_writes_back_byte_for_byte(name: str) -> None:
    path = OLD_RUNS / name
    record = read_manifest(path) if path.name == "manifest.json" else read_summary(path)

    assert json.dumps(record.to_dict(), indent=2, ensure_ascii=False) == path.read_text(encoding="utf-8")


def _raw(name: str) -> dict[str, object]:
    data = json.loads((RUNS / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_a_stop_early_run_reads_its_plan_and_its_outcome_as_types() -> None:
    manifest = read_manifest(RUNS / "stop-early" / "manifest.json")
    summary = read_summary(RUNS / "stop-early" / "summary.json")
    raw = _raw("stop-early/summary.json")["stop_early"]
    assert isinstance(raw, dict)

    assert manifest.stop_early is not None and summary.stop_early is not None
    assert manifest.stop_early.ended_early() and manifest.stop_early.decision is not None
    assert manifest.stop_early.decision.items_run == summary.stop_early.items_run == raw["items_run"] == 10
    assert (summary.stop_early.progress, summary.stop_early.verdict) == (raw["progress"], raw["verdict"])
    assert summary.stop_early.rule.alpha == raw["rule"]["alpha"]
    assert summary.stop_early.rule.question == "better"


def test_a_continued_stop_early_run_has_no_outcome_and_did_not_end_early() -> None:
    manifest = read_manifest(RUNS / "stop-early-continued" / "manifest.json")
    summary = read_summary(RUNS / "stop-early-continued" / "summary.json")

    assert manifest.stop_early is not None and manifest.stop_early.continued_at is not None
    assert not manifest.stop_early.ended_early()
    assert summary.stop_early is None


def test_flaky_items_read_as_types() -> None:
    summary = read_summary(RUNS / "flaky" / "summary.json")
    raw = _raw("flaky/summary.json")["flaky"]
    assert isinstance(raw, dict)

    assert summary.flaky is not None
    assert [(i.item_id, i.gate, i.flips) for i in summary.flaky.items] == [
        (i["item_id"], i["gate"], i["flips"]) for i in raw["items"]
    ]
    assert summary.flaky.gates == raw["gates"] and summary.flaky.threshold == raw["threshold"]
    assert summary.flaky.items[0].history[0]["verdict"] in {"pass", "fail"}


def test_a_merged_run_and_its_shard_read_as_types() -> None:
    merged = read_manifest(RUNS / "merged" / "manifest.json")
    shard = read_manifest(RUNS / "shard" / "manifest.json")

    assert merged.merge is not None and merged.shard is None
    assert merged.merge.count == 3 and sorted(merged.merge.shards) == ["0-of-3", "1-of-3", "2-of-3"]
    assert {s.status for s in merged.merge.shards.values()} == {"finished"}
    assert merged.merge.missing_shards == [] and merged.merge.inputs is not None
    assert shard.shard is not None and shard.merge is None
    assert (shard.shard.name, shard.shard.run_id, shard.shard.group) == ("0-of-3", merged.run_id, None)


SLICE = {
    "field": "feed_category", "value": "sports", "n": 12, "status": "fail", "verdict": "worse",
    "diff": -0.25, "ci_low": -0.4, "ci_high": -0.1, "ci_level": 0.95, "p_holm": 0.01, "margin": 0.05,
}  # fmt: skip
"""A slice gate's row as `analysis.slices.SliceResult.to_dict` writes it."""


def test_slice_rows_read_as_types() -> None:
    gate = {"name": "no_slice_regresses", "status": "fail", "slices": [SLICE]}
    summary = RunSummary.model_validate({"run_id": "r", "gates": [gate]})

    rows = summary.gates[0].slices
    assert rows is not None
    assert [(r.name, r.verdict, r.diff, r.n) for r in rows] == [("feed_category=sports", "worse", -0.25, 12)]
    assert summary.to_dict()["gates"][0]["slices"] == [SLICE]
    assert list(summary.to_dict()["gates"][0]["slices"][0]) == list(SLICE)


@pytest.mark.parametrize(
    ("name", "change", "says"),
    [
        ("stop-early/summary.json", ("stop_early", "items_run", "ten"), "`stop_early.items_run`"),
        ("flaky/summary.json", ("flaky", "items", "smoke-001"), "`flaky.items`"),
        ("merged/manifest.json", ("merge", "count", [3]), "`merge.count`"),
    ],
)
def test_a_wrong_type_in_a_section_names_the_run_file_and_field(
    tmp_path: Path, name: str, change: tuple[str, str, object], says: str
) -> None:
    from scoregate.store.run_files import DamagedRun

    data = _raw(name)
    block, key, value = change
    section = data[block]
    assert isinstance(section, dict)
    section[key] = value
    path = tmp_path / Path(name).name
    path.write_text(json.dumps(data), encoding="utf-8")

    with pytest.raises(DamagedRun) as damaged:
        _read_path(path)
    assert damaged.value.where == str(path) and says in damaged.value.message


def _read_path(path: Path) -> Manifest | RunSummary:
    return read_manifest(path) if path.name == "manifest.json" else read_summary(path)


def test_a_repeated_run_and_an_invalidated_run_read_as_types_and_as_plain_sections() -> None:
    repeated = read_summary(OLD_RUNS / "smoke-repeat-2" / "summary.json")
    invalidated = read_summary(OLD_RUNS / "counters-invalidated" / "summary.json")
    raw = json.loads((OLD_RUNS / "smoke-repeat-2" / "summary.json").read_text(encoding="utf-8"))["repeats"]

    assert repeated.repeats is not None
    assert (repeated.repeats.k, repeated.repeats.failed_records, repeated.repeats.items) == (2, 0, raw["items"])
    assert repeated.section("repeats") == raw  # the plain block, as a reader without the type sees it
    assert (invalidated.valid, invalidated.invalid_reason) == (False, "judge prompt was wrong")
    assert invalidated.superseded_by is None and invalidated.section("valid") is False
    assert repeated.valid is None and repeated.section("valid") is None  # never marked: no key, no value
