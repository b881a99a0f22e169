"""`scoregate run EXPERIMENT --stop-early --against RUN`: stop once the gate's question is settled, validly.

The real `scoregate` executable against the scripted OpenAI server: a reference run whose summaries miss their
sections, then a candidate whose summaries have them (better), or the same as the reference (no difference).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.sequential import item_order
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.projects import SCOREGATE_BIN, Runs
from support.scripted_openai import ScriptedOpenAI
from support.stop_early_runs import ITEMS, NO_SECTIONS, _grow_dataset


def _cli(project_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCOREGATE_BIN), *args, "-C", str(project_dir)], capture_output=True, text=True, timeout=300
    )


def _flat(result: subprocess.CompletedProcess[str]) -> str:
    return " ".join(f"{result.stdout}\n{result.stderr}".split())


@pytest.fixture
def reference(project_dir: Path, scripted_server: ScriptedOpenAI, runs: Runs) -> tuple[str, list[str]]:
    """A finished reference run of `counters` on 60 items whose summaries have no sections (the score is 0)."""
    ids = _grow_dataset(project_dir)
    scripted_server.responder = lambda body: NO_SECTIONS
    done = _cli(project_dir, "run", "counters", "--no-cache", "--no-mlflow", "--no-report")
    assert done.returncode == 0, _flat(done)
    scripted_server.responder = scripted_server.default_reply
    scripted_server.clear_requests()
    return runs.latest(), ids


def test_a_better_candidate_stops_early_and_says_where(
    project_dir: Path, scripted_server: ScriptedOpenAI, runs: Runs, reference: tuple[str, list[str]]
) -> None:
    ref, ids = reference
    done = _cli(project_dir, "run", "counters", "--stop-early", "--against", ref, "--stop-batch", "5", "--no-cache",
                "--no-mlflow", "--no-report")  # fmt: skip
    assert done.returncode == 0, _flat(done)
    assert "Traceback" not in done.stderr
    run_id = runs.latest()
    assert run_id != ref
    summary, manifest = runs.summary(run_id), runs.manifest(run_id)
    block = summary["stop_early"]
    n = block["items_run"]
    assert 0 < n < ITEMS and n % 5 == 0
    assert manifest["status"] == "stopped_early"
    assert block["progress"] == f"stopped at {n} of {ITEMS}"
    assert (block["verdict"], block["stop_reason"], block["against"]) == ("better", "settled", ref)
    assert block["gate"] == "sections_present" and block["metric"] == "required_sections_present"
    assert block["lower"] > 0 and block["upper"] <= 1
    assert "Waudby-Smith & Ramdas 2023" in block["rule"]["method_reference"]
    # the first n items of the seeded order ran, each once; the others are absent, not null and not failed
    stored = [r["item_id"] for r in runs.results(run_id)]
    assert sorted(stored) == sorted(item_order(ids, 0)[:n])
    assert summary["run_metrics"]["items"] == n and summary["run_metrics"]["error_count"] == 0
    assert len(scripted_server.task_requests()) == n
    out = _flat(done)
    assert f"stop early: stopped at {n} of {ITEMS} (settled): better against run {ref}" in out
    assert f"confidence sequence [{block['lower']:.3g}, {block['upper']:.3g}]" in out


def test_no_difference_runs_to_the_item_cap_and_says_inconclusive(
    project_dir: Path, scripted_server: ScriptedOpenAI, runs: Runs, reference: tuple[str, list[str]]
) -> None:
    ref, _ids = reference
    scripted_server.responder = lambda body: NO_SECTIONS  # the same answers as the reference: difference 0
    done = _cli(project_dir, "run", "counters", "--stop-early", "--against", ref, "--stop-batch", "5",
                "--max-items", "20", "--no-cache", "--no-mlflow", "--no-report")  # fmt: skip
    assert done.returncode == 0, _flat(done)
    block = runs.summary()["stop_early"]
    assert (block["items_run"], block["verdict"], block["stop_reason"]) == (20, "inconclusive", "item cap")
    assert block["lower"] < 0 < block["upper"]
    assert runs.manifest()["status"] == "stopped_early"
    assert len(runs.results()) == 20
    assert "stopped at 20 of 60 (item cap): inconclusive" in _flat(done)


def test_the_cost_cap_stops_an_unsettled_run_and_says_so(
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    reference: tuple[str, list[str]],
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> None:
    ref, _ids = reference
    prices = {"input_cost_per_mtok": 1.0, "output_cost_per_mtok": 4.0}
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config["models"]["scripted"].update(prices))
    scripted_server.responder = lambda body: NO_SECTIONS
    done = _cli(project_dir, "run", "counters", "--stop-early", "--against", ref, "--stop-batch", "5",
                "--max-cost", "0.000001", "--no-cache", "--no-mlflow", "--no-report")  # fmt: skip
    assert done.returncode == 0, _flat(done)
    block = runs.summary()["stop_early"]
    assert (block["items_run"], block["verdict"], block["stop_reason"]) == (5, "inconclusive", "cost cap")
    assert block["cost_usd"] > 0.000001
    assert runs.summary()["run_metrics"]["cost_usd_total"] == pytest.approx(block["cost_usd"])
    assert "stopped at 5 of 60 (cost cap): inconclusive" in _flat(done)


def test_resume_continues_a_stopped_run_to_the_full_dataset(
    project_dir: Path, scripted_server: ScriptedOpenAI, runs: Runs, reference: tuple[str, list[str]], mlflow_store: str
) -> None:
    ref, ids = reference
    first = _cli(project_dir, "run", "counters", "--stop-early", "--against", ref, "--no-cache", "--no-report")
    assert first.returncode == 0, _flat(first)
    run_id = runs.latest()
    n = runs.summary(run_id)["stop_early"]["items_run"]
    assert n < ITEMS
    again = _cli(project_dir, "run", "--resume", run_id, "--no-cache", "--no-report")
    assert again.returncode == 0, _flat(again)
    summary, manifest = runs.summary(run_id), runs.manifest(run_id)
    assert manifest["status"] == "finished"
    assert manifest["stop_early"]["continued_at"] is not None  # the record of the stop is kept in the manifest
    assert "stop_early" not in summary  # the summary is the full run's
    assert summary["run_metrics"]["items"] == ITEMS
    assert sorted(r["item_id"] for r in runs.results(run_id)) == sorted(ids)
    assert summary["scores"]["required_sections_present"]["mean"] == 1
    assert len(scripted_server.task_requests()) == ITEMS  # the n items were not run again
    assert "stop early" not in _flat(again)
    from mlflow.tracking import MlflowClient

    links = json.loads((project_dir / "runs" / run_id / "links.json").read_text(encoding="utf-8"))
    tags = MlflowClient(tracking_uri=mlflow_store).get_run(links["mlflow_run_id"]).data.tags
    assert tags["scoregate.stop_early"] == f"continued to the full dataset after it stopped at {n} of {ITEMS}"


BadInput = Callable[[Path, str], list[str]]


def _no_gate(project_dir: Path, ref: str) -> list[str]:
    config = project_dir / "scoregate.yaml"
    import yaml

    data: dict[str, Any] = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["experiments"]["counters"]["gates"] = []
    config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return ["run", "counters", "--stop-early", "--against", ref]


def _unbounded(project_dir: Path, ref: str) -> list[str]:
    config = project_dir / "scoregate.yaml"
    import yaml

    data: dict[str, Any] = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["gates"].insert(0, {"name": "words", "metric": "word_count", "op": "<=", "threshold": 400})
    data["experiments"]["counters"]["gates"] = ["words", "sections_present"]
    config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return ["run", "counters", "--stop-early", "--against", ref]


def _other_dataset(project_dir: Path, ref: str) -> list[str]:
    path = project_dir / "datasets" / "smoke_v1.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")  # one item fewer: another dataset version
    return ["run", "counters", "--stop-early", "--against", ref]


@pytest.mark.parametrize(
    ("make_args", "words"),
    [
        (lambda root, ref: ["run", "counters", "--stop-early"], "--stop-early: no reference run to compare against"),
        (lambda root, ref: ["run", "counters", "--stop-early", "--against", "nope-run"], "no run 'nope-run'"),
        (lambda root, ref: ["run", "counters", "--against", ref], "belong to --stop-early: add it"),
        (lambda root, ref: ["run", "counters", "--stop-early", "--against", ref, "--limit", "5"],
         "--limit cannot be combined with it"),
        (lambda root, ref: ["run", "--resume", ref, "--stop-early", "--against", ref], "--stop-early starts a new run"),
        (lambda root, ref: ["run", "counters", "--stop-early", "--against", ref, "--shard", "0/2"],
         "it cannot be sharded"),
        (_no_gate, "experiment counters has no gate on dataset smoke_v1, so no primary metric to decide on"),
        (_unbounded, "score word_count (gate words) has no declared range"),
        (_other_dataset, "was run on dataset smoke_v1 (content"),
    ],
    ids=["no-against", "missing-run", "against-alone", "with-limit", "with-resume", "with-shard", "no-gate",
         "unbounded", "other-dataset-version"],
)  # fmt: skip
def test_bad_stop_early_requests_are_refused_before_any_call(
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    reference: tuple[str, list[str]],
    make_args: BadInput,
    words: str,
) -> None:
    ref, _ids = reference
    done = _cli(project_dir, *make_args(project_dir, ref), "--no-mlflow", "--no-report")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert words in _flat(done)
    assert scripted_server.chat_requests() == []  # not even the model check was sent


def test_mlflow_langfuse_report_and_runs_show_record_where_it_stopped(
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    reference: tuple[str, list[str]],
    mlflow_store: str,
    fake_langfuse: FakeLangfuse,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ref, _ids = reference
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)
    done = _cli(project_dir, "run", "counters", "--stop-early", "--against", ref, "--stop-batch", "5", "--no-cache",
                "--prompt-source", "local")  # fmt: skip
    assert done.returncode == 0, _flat(done)
    run_id = runs.latest()
    block = runs.summary(run_id)["stop_early"]
    n, progress = block["items_run"], f"stopped at {block['items_run']} of {ITEMS}"
    assert block["stopped"] and n < ITEMS
    # MLflow: the rule as parameters, the figures as metrics, the words as tags
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_store)
    links = json.loads((project_dir / "runs" / run_id / "links.json").read_text(encoding="utf-8"))
    mlflow_run = client.get_run(links["mlflow_run_id"])
    params, metrics, tags = mlflow_run.data.params, mlflow_run.data.metrics, mlflow_run.data.tags
    assert (params["stop_early.against"], params["stop_early.metric"]) == (ref, "required_sections_present")
    assert (params["stop_early.method"], params["stop_early.alpha"]) == ("betting", str(block["rule"]["alpha"]))
    assert (metrics["stop_early.items_run"], metrics["stop_early.items_total"]) == (n, ITEMS)
    assert metrics["stop_early.lower"] == pytest.approx(block["lower"]) and metrics["stop_early.lower"] > 0
    assert tags["scoregate.stop_early"] == progress
    assert tags["scoregate.stop_early.verdict"] == "better"
    assert tags["scoregate.stop_early.reason"] == "settled"
    assert "confidence sequence" in tags["scoregate.stop_early.rule"]
    # Langfuse: one run-level score through the mirror, its metadata the figures and the rule
    (posted,) = [s for s in fake_langfuse.state.scores if s["name"] == "stop_early"]
    assert posted["datasetRunId"] and posted["value"] == "better"
    assert posted["comment"].startswith(f"{progress} (settled): better against run {ref}")
    assert posted["metadata"]["items_run"] == n and posted["metadata"]["lower"] == pytest.approx(block["lower"])
    assert posted["metadata"]["rule"]["method"] == "betting"
    # the report and `runs show`
    html = (project_dir / "runs" / run_id / "report.html").read_text(encoding="utf-8")
    assert f"{progress} (settled): better against run {ref}" in html
    shown = _cli(project_dir, "runs", "show", run_id)
    assert shown.returncode == 0
    assert f"stop early: {progress} (settled): better" in _flat(shown)
    assert f"scoregate run --resume {run_id}" in _flat(shown)
