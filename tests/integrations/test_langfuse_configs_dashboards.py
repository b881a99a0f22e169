"""Score configs, dashboards as files and annotation queues against the fake Langfuse, which serves these
endpoints as the recorded v4.16 server does (bodies checked against the SDK's published models)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.app.annotation import mirrored_traces
from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.app.scores_import import load_feedback
from scoregate.integrations.langfuse.score_configs import wanted_configs
from scoregate.sinks.langfuse.experiment_mirror import mirror_run_to_langfuse
from scoregate.store.run_store import RunStore
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import point_at
from support.projects import REPO, CliResult

Cli = Callable[..., CliResult]
CONFIGS = "/api/public/score-configs"


@pytest.fixture
def lf(scoregate: Cli, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangfuse]:
    """The fake Langfuse with the environment pointing at it (after the project fixture cleared it)."""
    point_at(monkeypatch, fake_langfuse)
    yield fake_langfuse
    assert fake_langfuse.validation_failures == []


def writes(fake: FakeLangfuse, since: int = 0, prefix: str = "/api/public") -> list[tuple[str, str]]:
    """(method, path) of every non-GET request after the first `since`, under `prefix`."""
    return [(r.method, r.path) for r in fake.requests[since:] if r.method != "GET" and r.path.startswith(prefix)]


def configs_by_name(fake: FakeLangfuse) -> dict[str, dict[str, Any]]:
    """The fake's score configs by name (the test expects one per name)."""
    rows = list(fake.state.score_configs.values())
    assert len({r["name"] for r in rows}) == len(rows), "a config name was created twice"
    return {r["name"]: r for r in rows}


# ---- item 1: score configs ------------------------------------------------------------------------
def test_setup_creates_one_config_per_declared_key_with_its_scale(
    scoregate: Cli, lf: FakeLangfuse, project_dir: Path
) -> None:
    result = scoregate("langfuse", "setup")
    assert result.code == 0, result.output
    stored = configs_by_name(lf)
    wanted, _ = wanted_configs(load_project(project_dir))
    assert set(stored) == {w.name for w in wanted}
    faithfulness = stored["faithfulness_score"]
    assert (faithfulness["dataType"], faithfulness["minValue"], faithfulness["maxValue"]) == ("NUMERIC", 1, 5)
    assert faithfulness["description"].startswith("ev_faithfulness_v1")
    assert stored["tldr_within_cap"]["dataType"] == "BOOLEAN"
    assert [c["label"] for c in stored["predicted_category"]["categories"]] == ["catchup", "howto", "neither"]
    assert (stored["online_thumb"]["minValue"], stored["online_thumb"]["maxValue"]) == (-1, 1)
    assert {"human_actionability", "human_faithfulness", "human_conciseness", "human_notes"} <= set(stored)


def test_second_setup_and_dry_run_write_nothing(scoregate: Cli, lf: FakeLangfuse) -> None:
    dry = scoregate("langfuse", "setup", "--dry-run")
    assert dry.code == 0 and "dry run: nothing written" in dry.output and lf.state.score_configs == {}
    assert scoregate("langfuse", "setup").code == 0
    before = len(lf.requests)
    again = scoregate("langfuse", "setup")
    assert again.code == 0 and writes(lf, before) == []
    assert "0 to create, 0 to update" in again.output


def test_a_changed_description_is_patched_an_archived_config_unarchived_a_type_change_reported(
    scoregate: Cli, lf: FakeLangfuse
) -> None:
    assert scoregate("langfuse", "setup").code == 0
    stored = configs_by_name(lf)
    stored["conciseness_score"]["description"] = "edited in the UI"
    stored["coverage_score"]["isArchived"] = True
    stored["format_adherence"].update(dataType="NUMERIC", minValue=0, maxValue=1, categories=None)
    before = len(lf.requests)

    result = scoregate("langfuse", "setup")

    assert result.code == 0
    patched = {r.path.rsplit("/", 1)[1]: r.body for r in lf.requests[before:] if r.method == "PATCH"}
    assert set(patched) == {stored["conciseness_score"]["id"], stored["coverage_score"]["id"]}
    assert patched[stored["coverage_score"]["id"]] == {"isArchived": False}
    assert stored["conciseness_score"]["description"].startswith("ev_conciseness_v1")
    assert stored["coverage_score"]["isArchived"] is False
    assert "conflict: format_adherence is NUMERIC in Langfuse and BOOLEAN here" in result.output
    assert stored["format_adherence"]["dataType"] == "NUMERIC"  # never silently changed
    assert not [r for r in lf.requests[before:] if r.method == "POST" and r.path == CONFIGS]


def test_a_config_name_the_server_holds_twice_is_found_not_created_a_third_time(
    scoregate: Cli, lf: FakeLangfuse
) -> None:
    assert scoregate("langfuse", "setup").code == 0
    twin = dict(configs_by_name(lf)["faithfulness_score"], id="twin-id", description="a duplicate")
    lf.state.score_configs["twin-id"] = twin  # the server accepts a second config with a name (recorded)
    before = len(lf.requests)
    assert scoregate("langfuse", "setup").code == 0
    assert not [r for r in lf.requests[before:] if r.method == "POST"]


def test_mirrored_scores_carry_their_config_id_and_fit_its_scale(
    project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = run_experiment(
        project_dir, "counters", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    ).store
    point_at(monkeypatch, fake_langfuse)
    report = mirror_run_to_langfuse(store, load_project(project_dir))  # the first mirror sets the configs up
    assert report.complete, report.lines()
    configs = configs_by_name(fake_langfuse)
    caps = [s for s in fake_langfuse.state.scores if s["name"] == "tldr_within_cap"]
    assert caps and {s["configId"] for s in caps} == {configs["tldr_within_cap"]["id"]}
    assert all(s["configId"] is None for s in fake_langfuse.state.scores if s["name"] not in configs)
    assert fake_langfuse.validation_failures == []


def test_a_composite_gets_a_config_over_its_parts_range_and_its_mirrored_scores_carry_it(
    scoregate: Cli, lf: FakeLangfuse, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "LANGFUSE_BASE_URL"):
        monkeypatch.delenv(name)
    store = run_experiment(
        project_dir, "smoke", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    ).store
    point_at(monkeypatch, lf)
    assert scoregate("langfuse", "setup").code == 0
    quality = configs_by_name(lf)["WeightedQuality"]  # 0.5, 0.3 and 0.2 of three 1-5 judge scores
    assert (quality["dataType"], quality["minValue"], quality["maxValue"]) == ("NUMERIC", 1, 5)
    assert quality["description"].startswith("composite: ")

    assert mirror_run_to_langfuse(store, load_project(project_dir)).complete
    posted = [s for s in lf.state.scores if s["name"] == "WeightedQuality"]
    assert len(posted) == 6 and {s["configId"] for s in posted} == {quality["id"]}


def test_prompts_sync_sets_the_score_configs_up_too(scoregate: Cli, lf: FakeLangfuse) -> None:
    result = scoregate("prompts", "sync")
    assert result.code == 0, result.output
    assert "score configs: " in result.output and " created, 0 updated, 0 unchanged" in result.output
    assert lf.state.score_configs


# ---- item 4: a server without the APIs ------------------------------------------------------------------
@pytest.fixture
def old_server(scoregate: Cli, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangfuse]:
    """A server without score configs, dashboards and annotation queues (answers their paths with its 404 page)."""
    missing = ("/api/public/score-configs", "/api/public/unstable/", "/api/public/annotation-queues")
    with FakeLangfuse(server_version="3.80.0", missing_apis=missing) as fake:
        point_at(monkeypatch, fake)
        yield fake


def test_a_server_without_score_configs_gets_a_clear_message_and_the_rest_still_works(
    scoregate: Cli, old_server: FakeLangfuse, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = scoregate("langfuse", "setup")
    assert result.code == 1
    assert "(server 3.80.0) has no score configs API (/api/public/score-configs)" in result.err
    assert "v4.16 or newer" in result.err and "Traceback" not in result.err
    synced = scoregate("prompts", "sync")
    assert synced.code == 0 and "score configs: not set up" in synced.output
    store = run_experiment(
        project_dir, "counters", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    ).store
    report = mirror_run_to_langfuse(store, load_project(project_dir))
    assert report.complete and any("no score configs API" in n for n in report.notes)


def test_shipped_evaluators_declare_valid_config_names() -> None:
    wanted, skipped = wanted_configs(load_project(REPO))
    assert skipped == [] and len(wanted) == len({w.name for w in wanted})


# ---- item 2: dashboards as files ----------------------------------------------------------------------
SHIPPED = REPO / "dashboards" / "podcast-quality.yaml"


@pytest.fixture
def with_dashboard(project_dir: Path) -> Path:
    """The test project with the shipped Phase 9 dashboard file."""
    (project_dir / "dashboards").mkdir()
    target = project_dir / "dashboards" / SHIPPED.name
    target.write_text(SHIPPED.read_text(encoding="utf-8"), encoding="utf-8")
    return target


def test_dashboards_sync_creates_the_shipped_dashboard_with_its_widgets_placed_and_prints_its_url(
    scoregate: Cli, lf: FakeLangfuse, with_dashboard: Path
) -> None:
    spec = yaml.safe_load(with_dashboard.read_text(encoding="utf-8"))
    result = scoregate("dashboards", "sync")
    assert result.code == 0, result.output
    (dashboard,) = lf.state.dashboards.values()
    assert dashboard["name"] == spec["name"]
    widgets = {w["name"]: w for w in lf.state.widgets.values()}
    assert set(widgets) == {w["name"] for w in spec["widgets"]}
    trend = widgets["WeightedQuality by prompt version"]
    assert (trend["view"], trend["dimensions"], trend["chartType"]) == (
        "scores-numeric", [{"field": "traceVersion"}], "VERTICAL_BAR"
    )  # fmt: skip
    tiles = {t["widgetId"]: t for t in dashboard["definition"]["widgets"]}
    assert set(tiles) == {w["id"] for w in widgets.values()}
    assert (tiles[trend["id"]]["x"], tiles[trend["id"]]["y"], tiles[trend["id"]]["width"]) == (0, 5, 12)
    assert f"{lf.base_url}/project/{lf.state.project_id}/dashboards/{dashboard['id']}" in result.output


def test_a_second_dashboards_sync_writes_nothing_and_a_dry_run_writes_nothing(
    scoregate: Cli, lf: FakeLangfuse, with_dashboard: Path
) -> None:
    dry = scoregate("dashboards", "sync", "--dry-run")
    assert dry.code == 0 and "dry run: nothing written" in dry.output and lf.state.widgets == {}
    assert scoregate("dashboards", "sync").code == 0
    before = len(lf.requests)
    again = scoregate("dashboards", "sync")
    assert again.code == 0 and writes(lf, before) == [] and "applied: 0 writes" in again.output


def test_a_changed_widget_is_patched_a_moved_one_moved_a_removed_one_pruned(
    scoregate: Cli, lf: FakeLangfuse, with_dashboard: Path
) -> None:
    assert scoregate("dashboards", "sync").code == 0
    spec = yaml.safe_load(with_dashboard.read_text(encoding="utf-8"))
    spec["widgets"][0]["metrics"] = [{"measure": "value", "agg": "p50"}]
    spec["widgets"][1]["placement"]["y"] = 30
    removed = spec["widgets"].pop()["name"]
    with_dashboard.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    before = len(lf.requests)

    kept = scoregate("dashboards", "sync")

    assert kept.code == 0 and "1 widget(s) only in Langfuse" in kept.output
    widgets = {w["name"]: w for w in lf.state.widgets.values()}
    assert widgets[spec["widgets"][0]["name"]]["metrics"] == [{"measure": "value", "agg": "p50"}]
    (dashboard,) = lf.state.dashboards.values()
    tiles = {t["widgetId"]: t for t in dashboard["definition"]["widgets"]}
    assert tiles[widgets[spec["widgets"][1]["name"]]["id"]]["y"] == 30
    assert removed in widgets and not [r for r in lf.requests[before:] if r.method == "DELETE"]

    pruned = scoregate("dashboards", "sync", "--prune")
    assert pruned.code == 0
    assert removed not in {w["name"] for w in lf.state.widgets.values()}
    assert len(lf.state.dashboards[dashboard["id"]]["definition"]["widgets"]) == len(spec["widgets"])


def test_a_bad_dashboard_file_is_a_clear_error_from_validate(scoregate: Cli, with_dashboard: Path) -> None:
    with_dashboard.write_text("name: x\nwidgets:\n  - name: w\n    view: traces\n    metrics: []\n    chart: BAR\n")
    result = scoregate("validate")
    assert result.code != 0
    assert "podcast-quality.yaml" in result.err and "view" in result.err and "Traceback" not in result.err


def test_a_server_without_the_dashboards_api_gets_a_clear_message(
    scoregate: Cli, old_server: FakeLangfuse, with_dashboard: Path
) -> None:
    result = scoregate("dashboards", "sync")
    assert result.code == 1
    assert "has no dashboards API (/api/public/unstable/dashboard-widgets)" in result.err


# ---- item 3: annotation queue and scores pull -----------------------------------------------------------
@pytest.fixture
def mirrored(project_dir: Path, lf: FakeLangfuse) -> RunStore:
    """A counters run of smoke_v1 (6 items), mirrored to the fake."""
    local = RunOptions(
        prompts=RunOptions.PromptSource(source="local"),
        mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})),
    )
    store = run_experiment(project_dir, "counters", local).store
    assert mirror_run_to_langfuse(store, load_project(project_dir)).complete
    return store


def rate(fake: FakeLangfuse, queue: dict[str, Any], trace_id: str, key: str, value: Any) -> dict[str, Any]:
    """What a person's rating in Langfuse's annotation UI stores: an ANNOTATION score with its config and queue."""
    config = {c["name"]: c for c in fake.state.score_configs.values()}[key]
    return fake.state.add_score({"name": key, "value": value, "dataType": config["dataType"], "traceId": trace_id,
                                 "configId": config["id"], "queueId": queue["id"], "source": "ANNOTATION"})  # fmt: skip


def test_annotation_round_trip_queue_rate_in_langfuse_pull_into_feedback(
    scoregate: Cli, lf: FakeLangfuse, mirrored: RunStore, project_dir: Path
) -> None:
    queued = scoregate("annotate", "queue", "smoke_v1")
    assert queued.code == 0, queued.output
    (queue,) = lf.state.queues.values()
    configs = {c["id"]: c["name"] for c in lf.state.score_configs.values()}
    assert [configs[i] for i in queue["scoreConfigIds"]] == [
        "human_actionability", "human_faithfulness", "human_conciseness", "human_notes"
    ]  # fmt: skip
    traces = mirrored_traces(mirrored)
    assert sorted(i["objectId"] for i in lf.state.queue_items) == sorted(traces.values())
    assert "6 traces added" in queued.output and f"/annotation-queues/{queue['id']}" in queued.output
    again = scoregate("annotate", "queue", mirrored.run_id)
    assert again.code == 0 and "found" in again.output and "0 traces added, 6 already queued" in again.output
    assert len(lf.state.queues) == 1 and len(lf.state.queue_items) == 6

    item_id, trace_id = sorted(traces.items())[0]
    rated = [rate(lf, queue, trace_id, "human_faithfulness", 4), rate(lf, queue, trace_id, "human_notes", "ok")]
    assert lf.validation_failures == []

    pulled = scoregate("scores", "pull", mirrored.run_id)
    assert pulled.code == 0, pulled.output
    assert "2 new, 0 already" in pulled.output
    records = list(load_feedback(project_dir).values())
    assert {r["score_id"] for r in records} == {s["id"] for s in rated}
    faithfulness = next(r for r in records if r["key"] == "human_faithfulness")
    assert (faithfulness["value"], faithfulness["trace_id"], faithfulness["run_id"], faithfulness["item_id"]) == (
        4, trace_id, mirrored.run_id, item_id
    )  # fmt: skip
    second = scoregate("scores", "pull", mirrored.run_id)
    assert second.code == 0 and "0 new, 2 already" in second.output
    assert len(load_feedback(project_dir)) == 2


def test_annotate_needs_a_mirrored_run(scoregate: Cli, lf: FakeLangfuse) -> None:
    result = scoregate("annotate", "queue", "gold_v1")
    assert result.code == 1 and "no run or dataset 'gold_v1'" in result.err
    assert "scoregate run gold_judges" in result.err


def test_a_server_without_annotation_queues_gets_a_clear_message(
    scoregate: Cli, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLangfuse(missing_apis=("/api/public/annotation-queues",)) as fake:
        point_at(monkeypatch, fake)
        local = RunOptions(
            prompts=RunOptions.PromptSource(source="local"),
            mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})),
        )
        store = run_experiment(project_dir, "counters", local).store
        assert mirror_run_to_langfuse(store, load_project(project_dir)).complete
        result = scoregate("annotate", "queue", store.run_id)
    assert result.code == 1
    assert f"(server {fake.server_version}) has no annotation queues API (/api/public/annotation-queues)" in result.err
