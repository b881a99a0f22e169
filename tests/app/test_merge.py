"""`scoregate merge RUN_ID`: the one writer of a sharded run; missing items make it INCOMPLETE; bad input: nothing."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.errors import ExitCode
from scoregate.store.lock import RunLock
from support.projects import CliResult

RUN = "nightly-7"
RUN_ONLY = ("run_id",)
"""The key of summary.json that names the run, not what it measured."""
HISTORY = ("runs", "run_ids", "skipped")
"""The keys of the `flaky` block that name the experiment's stored runs read when summarising (the store's history at
that moment, which differs between any two runs made one after the other), not what this run measured."""


def _shards(scoregate: Callable[..., CliResult], count: int, *skip: int, experiment: str = "counters") -> None:
    for index in range(count):
        if index in skip:
            continue
        result = scoregate("run", experiment, "--shard", f"{index}/{count}", "--run-id", RUN)
        assert result.code == 0, result.output


def _json(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _without(summary: dict[str, Any], keys: tuple[str, ...] = RUN_ONLY) -> dict[str, Any]:
    measured = {k: v for k, v in summary.items() if k not in keys}
    if "flaky" in measured:
        measured["flaky"] = {k: v for k, v in measured["flaky"].items() if k not in HISTORY}
    return measured


def _snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(directory)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


@pytest.mark.parametrize("experiment", ["counters", "smoke"])
def test_merged_summary_is_the_unsharded_summary(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Any, experiment: str
) -> None:
    warm = scoregate("run", experiment, "--no-mlflow")  # every reply cached: both sides below read the same ones
    assert warm.code == 0, warm.output
    _shards(scoregate, 3, experiment=experiment)
    merged = scoregate("merge", RUN, "--no-mlflow")
    assert merged.code == 0, merged.output
    reference = scoregate("run", experiment, "--no-mlflow")
    assert reference.code == 0, reference.output
    summary = _json(project_dir / "runs" / RUN / "summary.json")
    assert summary["run_id"] == RUN
    assert _without(summary) == _without(runs.summary(runs.latest()))
    assert summary["run_metrics"]["items"] == 6
    assert (project_dir / "runs" / RUN / "report.html").is_file()
    shown = scoregate("runs", "show", RUN)
    assert shown.code == 0 and RUN in shown.output


def test_a_missing_shard_is_incomplete_naming_its_items_until_it_is_supplied(
    scoregate: Callable[..., CliResult], project_dir: Path, mlflow_store: str
) -> None:
    _shards(scoregate, 3, 1)
    missing = sorted(
        json.loads(line)["item_id"]
        for line in (project_dir / "runs" / RUN / "shards" / "0-of-3" / "results.jsonl").read_text().splitlines()
    )
    assert missing  # shard 1 holds items of its own; they are named below
    first = scoregate("merge", RUN)
    assert first.code == ExitCode.UNDECIDED, first.output
    assert "INCOMPLETE: 2 planned item(s) missing (shards 1-of-3 missing)" in first.output
    summary = _json(project_dir / "runs" / RUN / "summary.json")
    assert summary["verdict"] == "incomplete"
    assert {g["status"] for g in summary["gates"]} == {"incomplete"}
    lost = summary["incomplete"]["missing_items"]
    assert len(lost) == 2 and not set(lost) & set(missing)
    assert all(item in summary["gates"][0]["detail"] for item in lost)
    assert summary["incomplete"]["missing_shards"] == ["1-of-3"]
    _shards(scoregate, 3, 0, 2)
    second = scoregate("merge", RUN)
    assert second.code == 0, second.output
    summary = _json(project_dir / "runs" / RUN / "summary.json")
    assert summary["verdict"] == "pass" and "incomplete" not in summary
    assert summary["run_metrics"]["items"] == 6
    from mlflow import MlflowClient

    client = MlflowClient(mlflow_store)
    found = [r for e in client.search_experiments() for r in client.search_runs([e.experiment_id])]
    assert len(found) == 1 and found[0].data.tags["gate.sections_present"] == "pass"


def test_a_second_merge_writes_nothing(
    scoregate: Callable[..., CliResult], project_dir: Path, mlflow_store: str
) -> None:
    _shards(scoregate, 2)
    assert scoregate("merge", RUN).code == 0
    before = _snapshot(project_dir / "runs" / RUN)
    mlflow_db = Path(mlflow_store.removeprefix("sqlite:///"))
    db_before = mlflow_db.stat().st_mtime_ns, mlflow_db.stat().st_size
    again = scoregate("merge", RUN)
    assert again.code == 0, again.output
    assert "already merged from these shards (0-of-2, 1-of-2); nothing changed" in again.output
    assert _snapshot(project_dir / "runs" / RUN) == before
    assert (mlflow_db.stat().st_mtime_ns, mlflow_db.stat().st_size) == db_before


def test_a_merge_cut_off_before_it_finished_is_done_again_in_full(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    _shards(scoregate, 2)
    assert scoregate("merge", RUN, "--no-mlflow").code == 0
    run_dir = project_dir / "runs" / RUN
    manifest = _json(run_dir / "manifest.json")
    manifest["merge"]["inputs"] = None  # what a merge killed before its last step leaves
    (run_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (run_dir / "summary.json").unlink()
    again = scoregate("merge", RUN, "--no-mlflow")
    assert again.code == 0, again.output
    assert _json(run_dir / "summary.json")["run_metrics"]["items"] == 6


def test_shards_from_elsewhere_are_merged_from_their_directories(
    scoregate: Callable[..., CliResult], project_dir: Path, tmp_path: Path
) -> None:
    _shards(scoregate, 2)
    artifacts = tmp_path / "artifacts"
    for name in ("0-of-2", "1-of-2"):  # as `actions/download-artifact` lays them out: one folder per shard
        shutil.copytree(project_dir / "runs" / RUN / "shards" / name, artifacts / f"shard-{name}" / name)
    shutil.rmtree(project_dir / "runs" / RUN)
    result = scoregate("merge", RUN, str(artifacts / "shard-0-of-2"), str(artifacts / "shard-1-of-2"), "--no-mlflow")
    assert result.code == 0, result.output
    assert _json(project_dir / "runs" / RUN / "summary.json")["run_metrics"]["items"] == 6


def _edit_manifest(directory: Path, change: Callable[[dict[str, Any]], None]) -> None:
    manifest = _json(directory / "manifest.json")
    change(manifest)
    (directory / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _bad(scoregate: Callable[..., CliResult], project_dir: Path, *dirs: Path) -> CliResult:
    result = scoregate("merge", RUN, *map(str, dirs), "--no-mlflow")
    assert result.code == ExitCode.ERROR, result.output
    assert "nothing was merged" in result.output
    assert not (project_dir / "runs" / RUN / "summary.json").exists()
    assert not (project_dir / "runs" / RUN / "results.jsonl").exists()
    return result


@pytest.fixture
def two_shards(scoregate: Callable[..., CliResult], project_dir: Path) -> tuple[Path, Path]:
    _shards(scoregate, 2)
    base = project_dir / "runs" / RUN / "shards"
    return base / "0-of-2", base / "1-of-2"


def test_shards_of_another_run_are_refused(
    scoregate: Callable[..., CliResult], project_dir: Path, two_shards: tuple[Path, Path]
) -> None:
    _edit_manifest(two_shards[1], lambda m: m["shard"].update(run_id="other-run"))
    result = _bad(scoregate, project_dir)
    assert "this shard belongs to run 'other-run', not 'nightly-7'" in result.output
    assert str(two_shards[1]) in result.output


def test_shards_of_different_commits_are_refused_naming_the_shard_and_the_part(
    scoregate: Callable[..., CliResult], project_dir: Path, two_shards: tuple[Path, Path]
) -> None:
    _edit_manifest(two_shards[1], lambda m: m["receipts"].update(git={"commit": "f" * 40, "dirty": False}))
    result = _bad(scoregate, project_dir)
    assert f"shard 1-of-2 ({two_shards[1]}) does not match shard 0-of-2" in result.output
    assert "commit ffffffffffff" in result.output


def test_shards_with_a_different_evaluator_are_refused(
    scoregate: Callable[..., CliResult], project_dir: Path, two_shards: tuple[Path, Path]
) -> None:
    _edit_manifest(two_shards[0], lambda m: m["receipts"]["evaluators"]["counters_v1"].update(version="9"))
    result = _bad(scoregate, project_dir)
    assert "the evaluators differ (counters_v1)" in result.output


def test_a_damaged_or_half_written_shard_is_refused(
    scoregate: Callable[..., CliResult], project_dir: Path, two_shards: tuple[Path, Path]
) -> None:
    manifest = two_shards[1] / "manifest.json"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text[: len(text) // 2], encoding="utf-8")
    result = _bad(scoregate, project_dir)
    assert f"{manifest}:" in result.output and "damaged run file" in result.output
    manifest.write_text(text, encoding="utf-8")
    results = two_shards[1] / "results.jsonl"
    results.write_bytes(results.read_bytes()[:-10])
    result = _bad(scoregate, project_dir)
    assert "half-written shard: results.jsonl ends in a partial line" in result.output


def test_a_shard_manifest_without_receipts_or_a_model_is_refused_naming_the_field(
    scoregate: Callable[..., CliResult], project_dir: Path, two_shards: tuple[Path, Path]
) -> None:
    manifest = two_shards[1] / "manifest.json"
    text = manifest.read_text(encoding="utf-8")
    _edit_manifest(two_shards[1], lambda m: m.pop("receipts"))
    result = _bad(scoregate, project_dir)
    assert f"{manifest}:" in result.output and "`receipts`: Field required" in result.output
    assert "has no `shard`" not in result.output  # it has one: what it lacks is named
    manifest.write_text(text, encoding="utf-8")
    for shard in two_shards:
        _edit_manifest(shard, lambda m: m["receipts"].pop("model"))
    result = _bad(scoregate, project_dir)
    assert "damaged shard manifest: its receipts name no experiment or no model" in result.output
    assert str(two_shards[0] / "manifest.json") in result.output and "Traceback" not in result.output


def test_two_directories_claiming_one_index_with_different_items_are_refused(
    scoregate: Callable[..., CliResult], project_dir: Path, two_shards: tuple[Path, Path], tmp_path: Path
) -> None:
    impostor = tmp_path / "impostor"
    shutil.copytree(two_shards[1], impostor)
    _edit_manifest(impostor, lambda m: m["shard"].update(index=0))
    result = _bad(scoregate, project_dir, *two_shards, impostor)
    assert "two directories claim shard 0-of-2 with different items" in result.output


def test_shards_that_disagree_on_n_are_refused(
    scoregate: Callable[..., CliResult], project_dir: Path, two_shards: tuple[Path, Path]
) -> None:
    _edit_manifest(two_shards[1], lambda m: m["shard"].update(count=3))
    result = _bad(scoregate, project_dir)
    assert "the shards disagree on the number of shards N" in result.output


def test_a_shard_still_running_is_refused(
    scoregate: Callable[..., CliResult], project_dir: Path, two_shards: tuple[Path, Path]
) -> None:
    with RunLock(two_shards[0]):
        result = _bad(scoregate, project_dir)
    assert f"{two_shards[0]}: shard is still running (process {os.getpid()} holds its lock)" in result.output


def test_a_damaged_record_in_a_shard_is_refused_naming_its_line(
    scoregate: Callable[..., CliResult], project_dir: Path, two_shards: tuple[Path, Path]
) -> None:
    results = two_shards[0] / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    results.write_text(lines[0] + "{not a record}\n" + "".join(lines[1:]), encoding="utf-8")
    result = _bad(scoregate, project_dir)
    assert f"{results}:2: damaged result record" in result.output


def test_a_merged_run_is_read_like_any_other_by_compare_rank_report_and_promote(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Any, mlflow_store: str, edit_yaml: Any
) -> None:
    prompt = "summarization-catchup"
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config.update(promotion={prompt: ["counters"]}))
    reference = scoregate("run", "counters")
    assert reference.code == 0, reference.output
    reference_id = runs.latest()
    _shards(scoregate, 2)
    assert scoregate("merge", RUN).code == 0

    compared = scoregate("compare", reference_id, RUN)
    assert compared.code == 0, compared.output
    assert "no change" in " ".join(compared.output.split())
    ranked = scoregate("rank", reference_id, RUN, "--metric", "required_sections_present", "--json")
    assert ranked.code == 0, ranked.output
    assert RUN in ranked.out and reference_id in ranked.out
    page = project_dir / "merged.html"
    reported = scoregate("report", RUN, "-o", str(page))
    assert reported.code == 0, reported.output
    assert RUN in page.read_text(encoding="utf-8")
    version = runs.manifest(RUN)["receipts"]["prompts"][prompt]["version"]
    shown = scoregate("promote", prompt, "--dry-run", "--version", version)
    assert shown.code == 0, shown.output
    assert RUN in shown.out or reference_id in shown.out  # the newest run of the version is the evidence
    assert f"dry run: every gate passed for {prompt}@{version} in counters" in " ".join(shown.output.split())


def test_the_merge_prints_its_scores_with_directions_and_each_fact_once(
    scoregate: Callable[..., CliResult], project_dir: Path, mlflow_store: str
) -> None:
    _shards(scoregate, 3, 1)
    merged = scoregate("merge", RUN)
    assert merged.code == ExitCode.UNDECIDED, merged.output

    lost = _json(project_dir / "runs" / RUN / "summary.json")["incomplete"]["missing_items"]
    assert lost and all(merged.output.count(item) == 1 for item in lost), merged.out  # said once, not per gate
    assert merged.output.count("(shards 1-of-3 missing)") == 1, merged.out
    gates = _json(project_dir / "runs" / RUN / "summary.json")["gates"]
    assert merged.output.count("items missing, named below (measured: ") == len(gates) > 1
    assert "↑" in merged.out and "↑ higher is better, ↓ lower is better, · no direction" in merged.output
    _shards(scoregate, 3, 0, 2)
    complete = scoregate("merge", RUN)
    assert complete.code == 0, complete.output
    assert complete.output.count("mlflow: run ") == 1, complete.out
