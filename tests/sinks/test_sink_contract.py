"""Sinks are observers behind one contract (`RunSink`), called only by `mirror_all`: a new tracker is one file and
one registry line (the throwaway `jsonl_sink.JsonlSink` here), one sink failing stops neither another nor the run,
what a sink says is redacted, and no sink imports another."""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

import scoregate
from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.errors import ScoregateError
from scoregate.sinks import registry
from scoregate.sinks.contract import RunSink, SinkContext, SinkReport
from scoregate.sinks.mirror_all import Mirror, mirror_all
from scoregate.store.run_store import RunStore
from support import jsonl_sink
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

SECRET = "tracker-secret-0123456789abcdef"
JSONL = "support.jsonl_sink:JsonlSink"


class BrokenSink:
    """A tracker whose every call fails, echoing its key the way a careless client library does."""

    name = "broken"

    def __init__(self, context: SinkContext) -> None:
        self.context = context

    def configured(self) -> str | None:
        """Always on."""
        return None

    def mirror(self, store: RunStore) -> SinkReport:
        """Fail, naming the key."""
        raise RuntimeError(f"tracker refused the key {os.environ['TRACKER_API_KEY']}")

    def mark_invalid(self, store: RunStore, record: object) -> SinkReport:
        """Fail too."""
        raise RuntimeError("tracker down")

    def forget(self, store: RunStore, item_ids: set[str]) -> None:
        """Nothing recorded, nothing to forget."""

    def link(self, store: RunStore, links: object) -> None:
        """Fail, so the cross-link's failure is seen too."""
        raise RuntimeError(f"no link with key {os.environ['TRACKER_API_KEY']}")


class ChattySink(BrokenSink):
    """A tracker that mirrors, but prints its key in its report lines and problem."""

    name = "chatty"

    def mirror(self, store: RunStore) -> SinkReport:
        """Report with the key in every text."""
        key = os.environ["TRACKER_API_KEY"]
        return SinkReport(lines=[f"chatty: sent with {key}"], warnings=[key], problem=f"half sent with {key}")


class RefusingSink(BrokenSink):
    """A tracker that checks itself before a run and refuses it (as Langfuse refuses a server too old)."""

    name = "refusing"

    def check_before_run(self) -> None:
        """Refuse, with the fix."""
        raise ScoregateError("refusing: the tracker cannot take this run", hint="upgrade the tracker")


@pytest.fixture
def with_jsonl(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one registry line of the throwaway tracker."""
    monkeypatch.setitem(registry.SINKS, "jsonl", JSONL)


@pytest.fixture
def with_broken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failing tracker registered FIRST (so the others are asked after it fails), then the jsonl one."""
    monkeypatch.setenv("TRACKER_API_KEY", SECRET)
    monkeypatch.setattr(
        registry, "SINKS", {"broken": "test_sink_contract:BrokenSink", **registry.SINKS, "jsonl": JSONL}
    )


def test_a_sink_that_checks_before_the_run_refuses_it_before_any_item_and_its_off_switch_lets_it_run(
    scoregate: Callable[..., CliResult], runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.SINKS, "refusing", "test_sink_contract:RefusingSink")

    refused = scoregate("run", "counters", "--no-mlflow")

    assert refused.code == 1, refused.output
    assert "refusing: the tracker cannot take this run" in refused.output and "upgrade the tracker" in refused.output
    assert not any((runs.root / run / "results.jsonl").is_file() for run in runs.ids())  # no item ran

    ran = scoregate("run", "counters", "--no-mlflow", "--no-mirror", "refusing")

    assert ran.code == 0, ran.output


def mlflow_tags(uri: str, run_id: str) -> dict[str, str]:
    """The tags of an MLflow run."""
    return dict(MlflowClient(tracking_uri=uri).get_run(run_id).data.tags)


def test_a_new_tracker_is_one_file_and_one_registry_line_and_receives_every_call(
    with_jsonl: None,
    scoregate: Callable[..., CliResult],
    runs: Runs,
    project_dir: Path,
    mlflow_store: str,
    scripted_server: ScriptedOpenAI,
) -> None:
    scripted_server.fail_next(500, times=3)  # one item: its try and both retries fail

    first = scoregate("run", "counters")

    assert first.code == 0, first.output
    run_id = runs.latest()
    path = project_dir / jsonl_sink.FILE
    assert f"jsonl: run {run_id} appended to {path}" in first.output
    mirrored, linked = jsonl_sink.calls(project_dir)
    summary = runs.summary(run_id)
    assert mirrored == {
        "call": "mirror", "run_id": run_id, "verdict": summary["verdict"],
        "means": {key: stats.get("mean") for key, stats in summary["scores"].items()},
    }  # fmt: skip
    mlflow_run_id = json.loads((project_dir / "runs" / run_id / "links.json").read_text())["mlflow_run_id"]
    assert linked == {"call": "link", "run_id": run_id, "links": {"mlflow_run_id": mlflow_run_id}}
    assert mlflow_tags(mlflow_store, mlflow_run_id)["jsonl.file"] == str(path)  # the cross-link, both ways
    failed = next(r["item_id"] for r in runs.results(run_id) if r["error"])

    retried = scoregate("run", "--resume", run_id, "--retry-errors")

    assert retried.code == 0, retried.output
    forgot, again = jsonl_sink.calls(project_dir)[2:4]
    assert forgot == {"call": "forget", "run_id": run_id, "items": [failed]}
    assert again["call"] == "mirror" and again["means"] == {
        key: stats.get("mean") for key, stats in runs.summary(run_id)["scores"].items()
    }

    marked = scoregate("runs", "invalidate", run_id, "--reason", "gold labels were wrong")

    assert marked.code == 0, marked.output
    reason = "gold labels were wrong"
    assert jsonl_sink.calls(project_dir)[-1] == {"call": "mark_invalid", "run_id": run_id, "reason": reason}
    assert f"jsonl: run {run_id} marked invalid in {path}" in marked.output
    assert f"mlflow: run {mlflow_run_id} tagged scoregate.valid=false" in marked.output


def test_a_sink_that_raises_stops_neither_the_others_nor_the_run_and_its_error_is_redacted(
    with_broken: None, scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path, mlflow_store: str
) -> None:
    result = scoregate("run", "counters", "--json")

    assert result.code == 0, result.output  # as without the broken sink: the run is stored, its mirrors reported
    run_id = runs.latest()
    assert "broken mirror failed: RuntimeError: tracker refused the key [REDACTED]" in result.output
    assert "broken-sync" not in result.output  # a plug-in sink has no alias command: `sync --to` is its redo
    assert f"redo with `scoregate sync {run_id} --to broken`" in result.output
    assert SECRET not in result.output
    printed = json.loads(result.out)
    assert printed["mirror_errors"] == {"broken": "RuntimeError: tracker refused the key [REDACTED]"}
    assert set(printed["mirrors"]) == {"mlflow", "jsonl"}  # asked after the broken one, both mirrored
    assert [c["call"] for c in jsonl_sink.calls(project_dir)] == ["mirror", "link"]
    assert (
        "broken: could not record the links of mlflow, jsonl: RuntimeError: no link with key [REDACTED]"
        in result.output
    )
    assert mlflow_tags(mlflow_store, printed["mirrors"]["mlflow"])["jsonl.file"] == str(project_dir / jsonl_sink.FILE)

    marked = scoregate("runs", "invalidate", run_id, "--reason", "x")

    assert marked.code == 1  # a mirror that could not be marked is a failure of the command, as before
    assert "broken: RuntimeError: tracker down" in marked.output
    assert "mlflow: run" in marked.output and jsonl_sink.calls(project_dir)[-1]["call"] == "mark_invalid"


@pytest.fixture
def stored_run(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> RunStore:
    """A finished run of `counters` mirrored nowhere (whatever the test registers)."""
    with monkeypatch.context() as patched:
        patched.setattr(registry, "SINKS", {})
        return run_experiment(project_dir, "counters", RunOptions()).store


def test_one_mirror_reads_the_run_record_once_for_every_sink_and_a_later_mirror_reads_it_again(
    with_jsonl: None, stored_run: RunStore, project_dir: Path, mlflow_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scoregate.store import record_files, run_store

    read: list[str] = []
    original = run_store.read_run_json

    def counting(path: Path, **hint: str) -> dict[str, Any]:
        read.append(path.name)
        return original(path, **hint)

    for module in (run_store, record_files):  # the store's file reads, typed or not
        monkeypatch.setattr(module, "read_run_json", counting)
    context = SinkContext(project_dir)

    outcome = mirror_all(Mirror(stored_run), context)

    assert set(outcome.links()) == {"mlflow", "jsonl"} and outcome.troubles() == {}
    assert (read.count("manifest.json"), read.count("summary.json")) == (1, 1)  # MLflow, telemetry, jsonl share it
    again = mirror_all(Mirror(stored_run), context, only="jsonl")  # the same context, a later mirror: read anew
    assert again.links() and (read.count("manifest.json"), read.count("summary.json")) == (2, 2)


def test_mirror_all_redacts_every_text_a_sink_reports_and_keeps_what_it_raised(
    stored_run: RunStore, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACKER_API_KEY", SECRET)
    monkeypatch.setattr(
        registry, "SINKS", {"broken": "test_sink_contract:BrokenSink", "chatty": "test_sink_contract:ChattySink"}
    )

    outcome = mirror_all(Mirror(stored_run), SinkContext(project_dir))

    broken, chatty = outcome.results["broken"], outcome.results["chatty"]
    assert broken.error == "RuntimeError: tracker refused the key [REDACTED]"
    assert chatty.report.lines == ["chatty: sent with [REDACTED]"] and chatty.report.warnings == ["[REDACTED]"]
    assert outcome.troubles() == {"broken": broken.error, "chatty": "half sent with [REDACTED]"}
    assert SECRET not in " ".join(outcome.notes) and len(outcome.notes) == 0  # chatty made no links to hand on
    with pytest.raises(RuntimeError, match="tracker refused"):
        outcome.raise_for("broken")


def test_the_selector_asks_only_the_named_sink_even_when_it_is_off(
    with_jsonl: None, stored_run: RunStore, project_dir: Path, mlflow_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = SinkContext(project_dir)

    only = mirror_all(Mirror(stored_run), context, only="jsonl")

    assert list(only.results) == ["jsonl"]
    assert only.links() == {"jsonl": f"{project_dir / jsonl_sink.FILE}#{stored_run.run_id}"}
    client = MlflowClient(tracking_uri=mlflow_store)
    experiments = [e.experiment_id for e in client.search_experiments()]
    assert client.search_runs(experiments) == []  # MLflow was not asked (and holds no run of it to link)
    assert mirror_all(Mirror(stored_run), context, skip=("mlflow", "langfuse", "jsonl")).results == {}
    monkeypatch.setenv("JSONL_SINK", "off")
    off = mirror_all(Mirror(stored_run), context, skip=("mlflow",))
    assert off.results["jsonl"].report.skipped == "jsonl: skipped — JSONL_SINK is off"
    assert off.results["langfuse"].report.skipped.startswith("langfuse: skipped — Langfuse is not configured")
    assert [c["call"] for c in jsonl_sink.calls(project_dir)] == ["mirror"]
    named = mirror_all(Mirror(stored_run), context, only="jsonl")  # a command aimed at it: asked anyway
    assert named.results["jsonl"].report.skipped is None
    assert [c["call"] for c in jsonl_sink.calls(project_dir)] == ["mirror", "mirror"]
    with pytest.raises(ValueError, match="no sink 'nope'"):
        mirror_all(Mirror(stored_run), context, only="nope")


def test_mlflow_sync_mirrors_only_mlflow_and_hands_its_link_to_the_other_sinks(
    with_jsonl: None, stored_run: RunStore, scoregate: Callable[..., CliResult], project_dir: Path, mlflow_store: str
) -> None:
    synced = scoregate("mlflow-sync", stored_run.run_id)

    assert synced.code == 0, synced.output
    mlflow_run_id = stored_run.links["mlflow_run_id"]
    assert f"mlflow: created run {mlflow_run_id} for {stored_run.run_id}" in synced.output  # mirrored nowhere before
    assert jsonl_sink.calls(project_dir) == [
        {"call": "link", "run_id": stored_run.run_id, "links": {"mlflow_run_id": mlflow_run_id}}
    ]  # not mirrored: the command targets MLflow


def test_a_plugin_tracker_gets_an_off_switch_a_resync_and_shard_adoption_without_an_edit_outside_its_file(
    with_jsonl: None, scoregate: Callable[..., CliResult], project_dir: Path, mlflow_store: str
) -> None:
    runs_dir = project_dir / "runs"

    def sharded(group: str) -> str:
        before = set(runs_dir.glob("counters-shards-*"))
        ran = scoregate("run", "counters", "--shard", "0/1", "--group", group)
        assert ran.code == 0, ran.output
        (run_dir,) = set(runs_dir.glob("counters-shards-*")) - before
        return run_dir.name

    adopted_run = sharded("on")
    merged = scoregate("merge", adopted_run, "--no-mlflow")  # the old switch, an alias of --no-mirror mlflow

    assert merged.code == 0, merged.output
    assert f"jsonl: run {adopted_run} appended to {project_dir / jsonl_sink.FILE}" in merged.output
    assert [(c["call"], c["run_id"], c.get("shard") or c.get("shards")) for c in jsonl_sink.calls(project_dir)] == [
        ("mirror_shard", adopted_run, "0-of-1"),  # the shard streamed its items
        ("adopt_shards", adopted_run, ["0-of-1"]),  # the merge took the shard over, then mirrored the run
        ("mirror", adopted_run, None),
    ]
    assert "mlflow:" not in merged.output  # switched off by its alias

    off_run = sharded("off")
    switched_off = scoregate("merge", off_run, "--no-mirror", "jsonl", "--no-mirror", "mlflow")

    assert switched_off.code == 0, switched_off.output
    assert [c["call"] for c in jsonl_sink.calls(project_dir) if c["run_id"] == off_run] == ["mirror_shard"]
    assert "jsonl:" not in switched_off.output

    synced = scoregate("sync", off_run, "--to", "jsonl")

    assert synced.code == 0, synced.output
    assert f"jsonl: run {off_run} appended to {project_dir / jsonl_sink.FILE}" in synced.output
    assert f"run {off_run} is mirrored to jsonl" in synced.output
    assert [c["call"] for c in jsonl_sink.calls(project_dir) if c["run_id"] == off_run] == ["mirror_shard", "mirror"]

    for command in (("sync", off_run, "--to", "wandb"), ("merge", off_run, "--no-mirror", "wandb")):
        unknown = scoregate(*command)
        assert unknown.code == 2, unknown.output
        assert "wandb: no such sink; the sinks are mlflow, langfuse, jsonl" in " ".join(unknown.output.split())


# ---------------------------------------------------------------- no sink imports another, at any distance
PACKAGE = Path(scoregate.__file__).parent
HIGHER_THAN_SINKS = ("scoregate.app", "scoregate.cli", "scoregate.report")  # report is a peer: no arrow either way


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str) -> Iterator[str]:
    """Every scoregate module a file imports: top level, in functions, under TYPE_CHECKING, relative."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph() -> dict[str, set[str]]:
    """Module → the scoregate modules it imports directly."""
    files = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {m for m in _imports(path, name) if m in files} for name, path in files.items()}


def reach(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` imports, at any distance."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for module in graph.get(todo.pop(), ()):
            if module not in seen:
                seen.add(module)
                todo.append(module)
    return seen


def test_no_sink_imports_another_and_the_sinks_and_integrations_import_no_higher_layer() -> None:
    graph = import_graph()
    crossing = {
        f"{module} → {reached}"
        for module in graph
        for mine, other in (
            ("scoregate.sinks.langfuse", "scoregate.sinks.mlflow"),
            ("scoregate.sinks.mlflow", "scoregate.sinks.langfuse"),
        )
        if module.startswith(mine)
        for reached in reach(graph, module)
        if reached.startswith(other)
    }
    assert crossing == set()
    contract = {"scoregate.sinks.contract", "scoregate.sinks.registry", "scoregate.sinks.mirror_all"}
    sinks = ("scoregate.sinks.mlflow", "scoregate.sinks.langfuse")
    assert {m for c in contract for m in reach(graph, c) if m.startswith(sinks)} == set()  # the registry is lazy
    upward = {
        f"{module} → {imported}"
        for module, imported_set in graph.items()
        for imported in imported_set
        if (module.startswith("scoregate.sinks") and imported.startswith(HIGHER_THAN_SINKS))
        or (module.startswith("scoregate.integrations") and imported.startswith("scoregate.sinks"))
    }
    assert upward == set()


def test_mirror_all_is_the_only_caller_of_a_sink_and_mlflow_has_one_client_factory() -> None:
    graph = import_graph()
    sink_modules = {m for m in graph if m.startswith(("scoregate.sinks.mlflow.", "scoregate.sinks.langfuse."))}
    callers = {
        f"{module} → {imported}"
        for module, imported_set in graph.items()
        if not module.startswith("scoregate.sinks")
        for imported in imported_set & sink_modules
    }
    allowed = {  # reading MLflow (promotion evidence, a run's UI link) is not mirroring: they use the client factory
        "scoregate.app.promotion → scoregate.sinks.mlflow.client",
        "scoregate.app.promotion_evidence → scoregate.sinks.mlflow.client",
        "scoregate.app.replay_evidence → scoregate.sinks.mlflow.client",
        "scoregate.app.promotion_runs → scoregate.sinks.mlflow.run_mirror",
        "scoregate.app.promotion_runs → scoregate.sinks.mlflow.experiments",
        "scoregate.app.runs → scoregate.sinks.mlflow.client",
        "scoregate.app.runs → scoregate.sinks.mlflow.experiments",
        # registering a judge version and tagging a rollout's decision are not mirroring either: the client factory
        "scoregate.app.judges_mlflow → scoregate.sinks.mlflow.client",
        "scoregate.app.rollout_watch → scoregate.sinks.mlflow.client",
    }
    assert callers - allowed == set()
    built = [path.name for path in PACKAGE.rglob("*.py") if "MlflowClient(" in path.read_text(encoding="utf-8")]
    assert built == ["client.py"]
    assert isinstance(registry.build_sink("mlflow", SinkContext(PACKAGE)), RunSink)
    assert isinstance(registry.build_sink("langfuse", SinkContext(PACKAGE)), RunSink)
