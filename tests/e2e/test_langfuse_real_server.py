"""Langfuse as the real v4.16 server behaves (recorded in shared/data/langfuse-recordings): the fake answers
numbers in JavaScript's form, links experiments to datasets and keeps project ids; scoregate must stay
idempotent and exactly-once against that."""

from __future__ import annotations

import datetime as dt
import json
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.langfuse_check import CHECK_TIMEOUT_S
from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.integrations.langfuse.client import SDK_MAJOR
from scoregate.integrations.langfuse.datasets_sync import langfuse_item_id, sync_datasets
from scoregate.integrations.langfuse.delivery import trace_id_for
from scoregate.integrations.langfuse.mirror_state import STATE_FILE, trace_seed
from scoregate.sinks.langfuse.experiment_mirror import MirrorReport, mirror_run_to_langfuse
from scoregate.store.run_store import RunStore
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import langfuse_env_fixture  # noqa: F401
from support.projects import DATASET_IDS, REPO, CliResult

Cli = Callable[..., CliResult]


def writes(fake: FakeLangfuse, since: int = 0) -> list[tuple[str, str]]:
    """Return (method, path) of every request after the first `since` that was not a read."""
    return [(r.method, r.path) for r in fake.requests[since:] if r.method != "GET"]


# ---- item 1: a second sync of every shipped file writes nothing ------------------------------------
def test_fake_returns_numbers_as_the_server_prints_them(scoregate: Cli, langfuse_env: FakeLangfuse) -> None:
    assert scoregate("datasets", "sync", "extraction_v1", project=REPO).code == 0
    stored = [i["expectedOutput"] for i in langfuse_env.state.items.values()]
    totals = [o["total"] for o in stored if isinstance(o, dict) and "total" in o]
    assert 219 in totals and all(not (isinstance(t, float) and t.is_integer()) for t in totals)


def test_second_sync_of_every_shipped_dataset_and_prompt_writes_nothing(
    scoregate: Cli, langfuse_env: FakeLangfuse
) -> None:
    assert scoregate("datasets", "sync", project=REPO).code == 0
    assert scoregate("prompts", "sync", project=REPO).code == 0
    before = len(langfuse_env.requests)
    datasets = scoregate("datasets", "sync", project=REPO)
    prompts = scoregate("prompts", "sync", project=REPO)
    assert datasets.code == 0 and prompts.code == 0, datasets.output + prompts.output
    assert writes(langfuse_env, before) == []
    assert "applied: 0 writes" in datasets.output
    shipped = len(list((REPO / "prompts").glob("*.yaml")))
    assert f"0 versions created, 0 relabelled, {shipped} unchanged" in prompts.output
    assert langfuse_env.validation_failures == []


def test_prompt_with_float_config_is_unchanged_after_the_server_rewrote_it(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    assert "temperature: 0\n" in (project_dir / "prompts" / "extraction.yaml").read_text(encoding="utf-8")
    assert scoregate("prompts", "sync", "extraction").code == 0
    assert langfuse_env.state.prompts["extraction"][0]["config"]["temperature"] == 0
    assert type(langfuse_env.state.prompts["extraction"][0]["config"]["temperature"]) is int
    assert scoregate("prompts", "sync", "extraction").code == 0
    assert [v["version"] for v in langfuse_env.state.prompts["extraction"]] == [1]


# ---- runs mirrored as experiments ---------------------------------------------------------------
def langfuse_on(monkeypatch: pytest.MonkeyPatch, fake: FakeLangfuse) -> None:
    """Point the Langfuse variables at the fake (runs are made with them unset)."""
    for name, value in fake.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SCOREGATE_LANGFUSE_RPM", "0")


@pytest.fixture
def counters_run(project_dir: Path) -> RunStore:
    """A finished run of the `counters` experiment (6 smoke items), made with Langfuse off."""
    return run_experiment(
        project_dir, "counters", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    ).store


def mirror(store: RunStore, project_dir: Path) -> MirrorReport:
    """Mirror a stored run through the library entry point."""
    return mirror_run_to_langfuse(store, load_project(project_dir))


def roots(fake: FakeLangfuse) -> list[dict[str, Any]]:
    """The runner's item root spans."""
    return fake.state.find_spans("experiment-item-run")


def test_a_run_of_a_synced_dataset_is_linked_to_its_dataset_items(
    counters_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    langfuse_on(monkeypatch, fake_langfuse)
    assert sync_datasets(load_project(project_dir), ["smoke_v1"]).applied

    report = mirror(counters_run, project_dir)

    assert report.complete and report.dataset_linked, report.lines()
    dataset = fake_langfuse.state.datasets["smoke_v1"]
    (experiment,) = fake_langfuse.state.experiments().values()
    assert experiment["id"] == report.experiment_id
    assert experiment["name"].startswith(f"{counters_run.run_id} · scripted · ")  # run id · model · prompt@version
    assert experiment["datasetId"] == dataset["id"]
    assert experiment["itemIds"] == {langfuse_item_id("smoke_v1", i) for i in DATASET_IDS}
    if SDK_MAJOR < 5 or fake_langfuse.server_mode == "old":  # run items: the run is listed under the dataset's runs
        (run,) = fake_langfuse.state.runs.values()  # SDK 4's runner posts them; under SDK 5 scoregate does (< v4.59)
        assert (run["name"], run["datasetId"]) == (experiment["name"], dataset["id"])
        linked = {(r["datasetItemId"], r["traceId"]) for r in fake_langfuse.state.run_items}
        traces = {
            (langfuse_item_id("smoke_v1", i), trace_id_for(trace_seed(counters_run.run_id, i))) for i in DATASET_IDS
        }
        assert linked == traces and len(fake_langfuse.state.run_items) == len(DATASET_IDS)
        if SDK_MAJOR < 5:  # SDK 4's runner takes the dataset run's id as the experiment's
            assert run["id"] == report.experiment_id
    else:  # v4.59+ shows SDK 5's experiments from span attributes alone
        assert fake_langfuse.state.runs == {}
    assert any("linked to Langfuse dataset smoke_v1" in line for line in report.lines())
    assert fake_langfuse.validation_failures == []


def test_a_run_of_a_dataset_not_synced_says_so_and_offers_the_sync(
    counters_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    langfuse_on(monkeypatch, fake_langfuse)
    report = mirror(counters_run, project_dir)
    assert report.complete and report.dataset_linked is False
    (experiment,) = fake_langfuse.state.experiments().values()
    assert experiment["datasetId"] is None
    assert any("not synced" in n and "scoregate datasets sync smoke_v1" in n for n in report.notes)


def test_a_remirror_after_a_lost_record_lands_in_the_same_experiment(
    counters_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    langfuse_on(monkeypatch, fake_langfuse)
    first = mirror(counters_run, project_dir)
    (counters_run.directory / STATE_FILE).unlink()
    second = mirror(counters_run, project_dir)
    assert first.complete and second.complete
    assert second.experiment_id == first.experiment_id
    assert set(fake_langfuse.state.experiments()) == {first.experiment_id}
    run_level = {s["datasetRunId"] for s in fake_langfuse.state.scores if s["datasetRunId"]}
    assert run_level == {first.experiment_id}


def test_a_remirror_after_a_lost_record_stores_no_second_dataset_run_item(
    counters_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_langfuse.server_mode = "old"  # lists a run under its dataset from run items only (SDK 4's or scoregate's)
    langfuse_on(monkeypatch, fake_langfuse)
    assert sync_datasets(load_project(project_dir), ["smoke_v1"]).applied
    first = mirror(counters_run, project_dir)
    stored = [dict(row) for row in fake_langfuse.state.run_items]  # the server's table, every row it was sent
    assert len(stored) == len(DATASET_IDS)
    (counters_run.directory / STATE_FILE).unlink()

    second = mirror(counters_run, project_dir)

    assert first.complete and second.complete, second.lines()
    assert second.experiment_id == first.experiment_id
    assert fake_langfuse.state.run_items == stored  # still one row per item, under the same ids
    assert fake_langfuse.validation_failures == []


@pytest.mark.skipif(SDK_MAJOR < 5, reason="SDK 4's runner posts the run items itself (and logs what fails)")
def test_run_items_the_server_did_not_take_are_posted_by_the_next_sync_once(
    counters_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_langfuse.server_mode = "old"
    langfuse_on(monkeypatch, fake_langfuse)
    assert sync_datasets(load_project(project_dir), ["smoke_v1"]).applied
    fake_langfuse.fail_next("/api/public/dataset-run-items", status=500, retry_after=None, times=1)

    first = mirror(counters_run, project_dir)

    assert not first.complete and first.items_confirmed == 0 and fake_langfuse.state.run_items == []
    assert any("dataset run item not posted: " in w and "500" in w for w in first.warnings), first.lines()
    second = mirror(counters_run, project_dir)
    assert second.complete and second.items_sent == 0, second.lines()  # traces were in: only the run items
    assert len(fake_langfuse.state.run_items) == len(DATASET_IDS)


def shift_calls(store: RunStore, delta: dt.timedelta) -> None:
    """Move every stored call's recorded start and end by `delta` (a run made long before its mirror)."""
    path = store.directory / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        for call in row["calls"]:
            for key in ("started_at", "ended_at"):
                call[key] = (dt.datetime.fromisoformat(call[key]) + delta).isoformat()
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_traces_and_generations_carry_the_recorded_call_times_not_the_mirror_time(
    counters_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    shift_calls(counters_run, -dt.timedelta(days=2))
    langfuse_on(monkeypatch, fake_langfuse)
    assert mirror(counters_run, project_dir).complete
    for result in counters_run.iter_results():
        trace = trace_id_for(trace_seed(counters_run.run_id, result.item_id))
        (call,) = result.calls
        assert call.started_at is not None and call.ended_at is not None
        ended = dt.datetime.fromisoformat(call.ended_at).timestamp() * 1e9
        (generation,) = [s for s in fake_langfuse.state.spans if s["traceId"] == trace and s["name"] == "task"]
        assert generation["endTimeUnixNano"] == pytest.approx(ended, abs=1e6)
        assert (generation["endTimeUnixNano"] - generation["startTimeUnixNano"]) / 1e6 == pytest.approx(
            call.latency_ms, abs=0.01
        )
        stamp = dt.datetime.fromisoformat(fake_langfuse.state.trace(trace)["timestamp"].replace("Z", "+00:00"))
        assert dt.datetime.now(dt.UTC) - stamp > dt.timedelta(days=1)


@pytest.mark.parametrize("generation", ["old", "new"])
def test_trace_metadata_and_tags_carry_the_dashboard_dimensions(
    generation: str,
    counters_run: RunStore,
    project_dir: Path,
    fake_langfuse: FakeLangfuse,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_langfuse.server_mode = "old" if generation == "old" else "new"  # v4.16 keeps SDK 5's JSON text as sent
    langfuse_on(monkeypatch, fake_langfuse)
    assert mirror(counters_run, project_dir).complete
    for result in counters_run.iter_results():
        trace = fake_langfuse.state.trace(trace_id_for(trace_seed(counters_run.run_id, result.item_id)))
        meta = trace["metadata"]
        for field in ("desired_style", "feed_id", "feed_category"):
            assert meta[field] == result.input[field]
            assert f"{field}:{result.input[field]}" in trace["tags"]
        assert meta["scoregate_experiment"] == "counters" and meta["model"] == "scripted"
        assert meta["prompt_version"] == result.prompt and trace["version"] == result.prompt
        assert {"experiment:counters", "model:scripted", f"prompt:{result.prompt}"} <= set(trace["tags"])
    (root, *_) = roots(fake_langfuse)
    if generation == "old" or SDK_MAJOR < 5:  # SDK 4's encoding, whichever SDK ran: text as text, a key each
        name = root["attributes"]["langfuse.observation.metadata.experiment_name"]
        assert name.endswith("/counters") and not name.startswith('"')
        assert root["attributes"]["langfuse.experiment.metadata.scoregate.run_id"] == counters_run.run_id


def test_declared_dimensions_replace_the_default_ones(
    project_dir: Path,
    fake_langfuse: FakeLangfuse,
    monkeypatch: pytest.MonkeyPatch,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> None:
    edit_yaml(project_dir / "datasets" / "smoke_v1.yaml", lambda meta: meta.update(dimensions=["title"]))
    store = run_experiment(
        project_dir, "counters", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    ).store
    langfuse_on(monkeypatch, fake_langfuse)
    assert mirror(store, project_dir).complete
    result = next(iter(store.iter_results()))
    meta = fake_langfuse.state.trace(trace_id_for(trace_seed(store.run_id, result.item_id)))["metadata"]
    assert meta["title"] == result.input["title"] and "feed_id" not in meta


# ---- item 8: mirror record keyed by project; a server that lost the run; long metadata -------------
def test_a_reset_server_at_the_same_url_gets_the_run_again(
    counters_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    langfuse_on(monkeypatch, fake_langfuse)
    assert mirror(counters_run, project_dir).complete
    fake_langfuse.reset()  # same URL, same keys, same project id, nothing stored

    again = mirror(counters_run, project_dir)

    assert again.complete and again.items_sent == 6, again.lines()
    assert any("no longer has this run's traces" in w for w in again.warnings)
    assert len(roots(fake_langfuse)) == 6 and len(fake_langfuse.state.scores) > 0


def test_another_project_at_the_same_url_gets_the_run_in_full(
    counters_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    langfuse_on(monkeypatch, fake_langfuse)
    assert mirror(counters_run, project_dir).complete
    fake_langfuse.state.project_id = "another-project"
    again = mirror(counters_run, project_dir)
    assert again.complete and again.items_sent == 6
    assert any("now serves project another-project" in w for w in again.warnings)
    record = json.loads((counters_run.directory / STATE_FILE).read_text(encoding="utf-8"))
    assert record["project_id"] == "another-project"


def test_item_metadata_too_long_for_a_span_attribute_is_named(
    project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = project_dir / "datasets" / "smoke_v1.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[0].setdefault("metadata", {})["reviewer_notes"] = "x" * 300
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    store = run_experiment(
        project_dir, "counters", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    ).store
    langfuse_on(monkeypatch, fake_langfuse)
    report = mirror(store, project_dir)
    assert report.complete
    (note,) = [n for n in report.notes if n.startswith("metadata:")]
    assert f"{rows[0]['id']}.reviewer_notes" in note and "results.jsonl" in note


# ---- item 6: Langfuse down does not block a run on the local prompt files ---------------------------
def test_no_langfuse_runs_the_local_prompts_while_the_keys_are_set_and_langfuse_is_down(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    langfuse_env.down()
    result = scoregate("run", "counters", "--no-langfuse", "--no-mlflow")
    assert result.code == 0, result.output
    assert "prompts: local files (prompt source local)" in result.output
    (run_dir,) = [p for p in (project_dir / "runs").iterdir() if p.is_dir()]
    prompts = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))["receipts"]["prompts"]
    assert {p["source"] for p in prompts.values()} == {"file"}
    assert langfuse_env.requests == []


def test_langfuse_down_is_an_error_naming_the_local_prompt_source_never_a_silent_fallback(
    scoregate: Cli, langfuse_env: FakeLangfuse
) -> None:
    langfuse_env.down()
    result = scoregate("run", "counters", "--no-mlflow")
    assert result.code != 0
    assert "cannot reach Langfuse" in result.err and "--prompt-source local" in result.err
    local = scoregate("run", "counters", "--no-mlflow", "--prompt-source", "local")
    assert local.code == 0, local.output
    assert "prompts: local files" in local.output and "langfuse mirror failed" in local.output


def test_a_langfuse_version_cannot_be_asked_for_with_local_prompts(scoregate: Cli, langfuse_env: FakeLangfuse) -> None:
    result = scoregate("run", "counters", "--no-langfuse", "--prompt-label", "candidate")
    assert result.code != 0 and "--prompt-label candidate names a Langfuse version" in result.err
    result = scoregate("run", "counters", "--prompt-source", "files")
    assert result.code != 0 and "--prompt-source must be one of auto, langfuse, local" in result.err


# ---- item 8: `langfuse check` fails fast ---------------------------------------------------------
def test_check_against_a_hung_server_fails_fast_and_says_so(scoregate: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as hung:  # accepts connections (the kernel's backlog) and never answers
        hung.bind(("127.0.0.1", 0))
        hung.listen(8)
        for name, value in {"LANGFUSE_PUBLIC_KEY": "pk-lf-x", "LANGFUSE_SECRET_KEY": "sk-lf-x",
                            "LANGFUSE_HOST": f"http://127.0.0.1:{hung.getsockname()[1]}"}.items():  # fmt: skip
            monkeypatch.setenv(name, value)
        started = time.perf_counter()
        result = scoregate("langfuse", "check", project=None)
        took = time.perf_counter() - started
    assert result.code != 0
    assert f"did not answer within {CHECK_TIMEOUT_S} s" in result.err
    assert took < CHECK_TIMEOUT_S + 3  # was 16-26 s against a real server that was down
