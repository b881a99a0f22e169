"""A resume keeps the options the run recorded: the mirrors it turned off (`--no-mlflow`, `--no-langfuse`), whether
it writes a report (`--no-report`) and MLflow evaluation rows (`--eval-rows`); a flag given on the resume that turns
a mirror off still wins, and a manifest from before these options were recorded resumes as it always did."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.projects import CliResult, Runs

Cli = Callable[..., CliResult]


def _interrupted(runs: Runs, run_id: str, *, drop: tuple[str, ...] = ()) -> None:
    """Mark a stored run interrupted (with its last item lost), optionally without some recorded options (an old
    manifest)."""
    path = runs.root / run_id / "manifest.json"
    manifest: dict[str, Any] = runs.manifest(run_id)
    manifest["status"] = "interrupted"
    manifest["options"] = {k: v for k, v in manifest["options"].items() if k not in drop}
    path.write_text(json.dumps(manifest), encoding="utf-8")
    results = runs.root / run_id / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    results.write_text("".join(lines[:-1]), encoding="utf-8")
    for name in ("summary.json", "report.html"):
        (runs.root / run_id / name).unlink(missing_ok=True)


def _links(runs: Runs, run_id: str) -> dict[str, Any]:
    path = runs.root / run_id / "links.json"
    return dict(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else {}


def test_the_manifest_records_the_mirrors_turned_off_the_report_and_the_evaluation_rows(
    scoregate: Cli, runs: Runs
) -> None:
    assert scoregate("run", "counters", "--limit", "2", "--no-mlflow", "--no-langfuse", "--no-report").code == 0
    options = runs.manifest()["options"]
    assert options["mirrors_off"] == ["langfuse", "mlflow"]
    assert options["report"] is False and options["eval_rows"] is False


def test_a_resume_keeps_no_mlflow_and_no_report(scoregate: Cli, runs: Runs, mlflow_store: str) -> None:
    assert scoregate("run", "counters", "--limit", "3", "--no-mlflow", "--no-report").code == 0
    run_id = runs.latest()
    _interrupted(runs, run_id)

    resumed = scoregate("run", "--resume", run_id)

    assert resumed.code == 0, resumed.output
    assert runs.manifest(run_id)["status"] == "finished" and len(runs.results(run_id)) == 3
    assert "mlflow_run_id" not in _links(runs, run_id) and "mlflow: run" not in resumed.output
    assert not (runs.root / run_id / "report.html").exists() and "report:" not in resumed.output


def test_a_finished_no_mlflow_run_resumed_gets_no_mlflow_mirror(scoregate: Cli, runs: Runs, mlflow_store: str) -> None:
    assert scoregate("run", "counters", "--limit", "2", "--no-mlflow").code == 0
    run_id = runs.latest()

    again = scoregate("run", "--resume", run_id)

    assert again.code == 0, again.output
    assert "already finished; nothing to resume" in again.output
    assert "MLflow mirror" not in again.output  # not "completed its MLflow mirror (it had not finished)"
    assert "mlflow_run_id" not in _links(runs, run_id)


def test_a_resume_keeps_no_langfuse_though_langfuse_is_set_now(
    scoregate: Cli, runs: Runs, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert scoregate("run", "counters", "--limit", "3", "--no-langfuse", "--no-mlflow").code == 0
    run_id = runs.latest()
    _interrupted(runs, run_id)
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)

    resumed = scoregate("run", "--resume", run_id)

    assert resumed.code == 0, resumed.output
    assert "prompts: local files (prompt source local)" in resumed.output
    assert fake_langfuse.requests == [] and "langfuse:" not in resumed.output


def test_a_flag_on_the_resume_that_turns_a_mirror_off_wins(scoregate: Cli, runs: Runs, mlflow_store: str) -> None:
    assert scoregate("run", "counters", "--limit", "3", "--no-report").code == 0
    run_id = runs.latest()
    _interrupted(runs, run_id)
    mirrored = _links(runs, run_id)["mlflow_run_id"]

    resumed = scoregate("run", "--resume", run_id, "--no-mlflow")

    assert resumed.code == 0, resumed.output
    assert "mlflow: run" not in resumed.output
    assert runs.manifest(run_id)["options"]["mirrors_off"] == []  # the run's own record is not rewritten
    assert _links(runs, run_id)["mlflow_run_id"] == mirrored


def test_an_old_manifest_without_the_recorded_options_resumes_as_before(
    scoregate: Cli, runs: Runs, mlflow_store: str
) -> None:
    assert scoregate("run", "counters", "--limit", "3", "--no-mlflow", "--no-report").code == 0
    run_id = runs.latest()
    _interrupted(runs, run_id, drop=("mirrors_off", "report", "eval_rows"))

    resumed = scoregate("run", "--resume", run_id)  # its flags were not recorded: the resume's own decide

    assert resumed.code == 0, resumed.output
    assert "mlflow: run" in resumed.output and (runs.root / run_id / "report.html").is_file()


def test_resumed_options_keep_the_evaluation_rows_and_ignore_what_an_old_manifest_did_not_record() -> None:
    from scoregate.app.run.resumption import resumed_options
    from scoregate.app.run.run_options import RunOptions
    from scoregate.store.record import Manifest

    receipts = {"experiment": "counters", "model": {"name": "scripted"}}
    recorded = RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"langfuse"}), eval_rows=True)).recorded()
    new = Manifest.model_validate({"run_id": "r", "receipts": receipts, "options": recorded})
    old = Manifest.model_validate({"run_id": "r", "receipts": receipts, "options": {"limit": 2, "repeat": 1}})

    _, kept = resumed_options(new, RunOptions(resume=RunOptions.ResumeFrom(run_id="r")))
    assert (kept.mirrors.eval_rows, kept.prompts.source, kept.mirrors.off) == (True, "local", {"langfuse"})
    _, as_before = resumed_options(
        old, RunOptions(resume=RunOptions.ResumeFrom(run_id="r"), mirrors=RunOptions.Mirrors(off=frozenset({"mlflow"})))
    )
    assert (as_before.mirrors.eval_rows, as_before.mirrors.off) == (False, {"mlflow"})
    assert as_before.mirrors.report and as_before.selection.limit == 2
