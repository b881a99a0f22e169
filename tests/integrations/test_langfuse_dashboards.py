"""The shipped Langfuse dashboard shows data on a v4 server: traces carry their tags, version and style on the
root span (where v4 reads them), and every widget groups as its title says.

The fake Langfuse reads dashboards as the recorded v4.16 server does (shared/data/langfuse-recordings/
v4.16-dashboard-read-path): a trace's tags and version from its root span only, a `tags` dimension grouped by
the whole tag array, `tags any of [...]` as hasAny.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from langfuse import Langfuse, propagate_attributes

from scoregate.app.annotation import mirrored_traces
from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.app.scores_import import import_scores
from scoregate.integrations.langfuse.dashboards_sync import sync_dashboards
from scoregate.sinks.langfuse.experiment_mirror import mirror_run_to_langfuse
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse
from support.fake_langfuse.tiles import number_tile_text
from support.langfuse_env import point_at
from support.projects import REPO, write_yaml

DASHBOARD = REPO / "dashboards" / "podcast-quality.yaml"
EXPERIMENTS = ("smoke", "catchup", "howto")
PER_STYLE_ITEMS = 3
"""Items of catchup_v1 and howto_v1 kept (smoke_v1 is kept whole: it has the two items routed by title)."""


# ---- the double reads as the recorded server does -----------------------------------------------------
def test_the_fake_reads_a_trace_s_tags_and_version_from_its_root_span_and_groups_tags_by_the_whole_array(
    fake_langfuse: FakeLangfuse,
) -> None:
    fake_langfuse.server_mode = "new"  # scores posted by the SDK itself: SDK 5's array needs a v4.59+ server
    client = Langfuse(public_key=fake_langfuse.public_key, secret_key=fake_langfuse.secret_key,
                      host=fake_langfuse.base_url, flush_interval=0.1)  # fmt: skip
    trace_ids = []
    for style, feed in (("howto", "platform_notes"), ("catchup", "founders_digest"), ("catchup", "founders_digest")):
        tags = ["experiment:smoke", f"desired_style:{style}", f"feed_id:{feed}"]
        with client.start_as_current_observation(name="experiment-item-run") as root:
            with (
                client.start_as_current_observation(name="experiment-item-task"),
                propagate_attributes(tags=tags, version=f"summarization-{style}@1"),
            ):
                pass  # what scoregate did before: attributes set inside the task, below the root span
            trace_ids.append(root.trace_id)
        client.create_score(trace_id=root.trace_id, name="faithfulness_score", value=4.0, data_type="NUMERIC")
    client.flush()
    by_name = {"column": "name", "operator": "=", "type": "string", "value": "faithfulness_score"}
    widget = {"name": "w", "view": "scores-numeric", "chartType": "HORIZONTAL_BAR",
              "metrics": [{"measure": "value", "agg": "avg"}], "dimensions": [{"field": "tags"}],
              "filters": [by_name]}  # fmt: skip
    fake_langfuse.state.widgets["w"] = widget

    # recorded: the root span has tags [] and version '' (a single `n/a` bar), the legacy trace merges them
    assert fake_langfuse.trace_as_dashboards_see_it(trace_ids[0]) == {
        "tags": (), "traceVersion": "", "traceName": "experiment-item-run", "userId": "", "sessionId": "",
        "traceRelease": "",
    }  # fmt: skip
    assert "desired_style:howto" in fake_langfuse.state.trace(trace_ids[0])["tags"]
    assert fake_langfuse.widget_rows("w") == [{"tags": (), "avg_value": 4.0}]

    for span in fake_langfuse.state.spans:  # what the fix does: the attributes on the root span too
        if span["parentSpanId"] is None:
            task = next(s for s in fake_langfuse.state.spans if s["parentSpanId"] == span["spanId"])
            span["attributes"].update({k: task["attributes"][k] for k in ("langfuse.trace.tags", "langfuse.version")})
    grouped = {row["tags"]: row["avg_value"] for row in fake_langfuse.widget_rows("w")}
    assert sorted(grouped) == [  # one group per distinct tag set, not per tag
        ("experiment:smoke", "desired_style:catchup", "feed_id:founders_digest"),
        ("experiment:smoke", "desired_style:howto", "feed_id:platform_notes"),
    ]
    widget["filters"].append({"column": "tags", "operator": "any of", "type": "arrayOptions",
                              "value": ["desired_style:howto"]})  # fmt: skip
    assert fake_langfuse.widget_rows("w") == [
        {"tags": ("experiment:smoke", "desired_style:howto", "feed_id:platform_notes"), "avg_value": 4.0}
    ]


# ---- three mirrored experiments ------------------------------------------------------------------------------
@pytest.fixture
def three_runs(
    project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, RunStore]]:
    """Runs of smoke (routed, all 9 items), catchup and howto (fixed prompts), each mirrored to the fake."""
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))
    config = yaml.safe_load((project_dir / "scoregate.yaml").read_text(encoding="utf-8"))
    for name in EXPERIMENTS:
        config["experiments"][name] = {k: v for k, v in shipped["experiments"][name].items() if k != "description"}
    write_yaml(project_dir / "scoregate.yaml", config)
    datasets = project_dir / "datasets"
    for name in ("smoke_v1", "catchup_v1", "howto_v1"):
        shutil.copy(REPO / "datasets" / f"{name}.yaml", datasets / f"{name}.yaml")
        lines = (REPO / "datasets" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
        kept = lines if name == "smoke_v1" else lines[:PER_STYLE_ITEMS]
        (datasets / f"{name}.jsonl").write_text("".join(kept), encoding="utf-8")
    local = RunOptions(
        prompts=RunOptions.PromptSource(source="local"),
        mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})),
    )
    stores = {name: run_experiment(project_dir, name, local).store for name in EXPERIMENTS}
    point_at(monkeypatch, fake_langfuse)
    project = load_project(project_dir)
    for store in stores.values():
        report = mirror_run_to_langfuse(store, project)
        assert report.complete, report.lines()
    yield stores
    assert fake_langfuse.validation_failures == []


def style_of(result: ItemResult) -> str:
    """The style an item was summarized in: the prompt its route (or the fixed prompt) chose."""
    return "howto" if result.prompt.startswith("summarization-howto") else "catchup"


def test_every_trace_has_its_tags_version_and_style_on_its_root_span(
    three_runs: dict[str, RunStore], fake_langfuse: FakeLangfuse
) -> None:
    routed_by_title = 0
    for experiment, store in three_runs.items():
        traces = mirrored_traces(store)
        for result in store.iter_results():
            seen = fake_langfuse.trace_as_dashboards_see_it(traces[result.item_id])
            assert seen is not None, result.item_id
            tags = set(seen["tags"])
            assert seen["traceVersion"] == result.prompt, result.item_id
            assert {f"experiment:{experiment}", f"prompt:{result.prompt}", "model:scripted"} <= tags
            assert f"desired_style:{style_of(result)}" in tags, (experiment, result.item_id, tags)
            assert {f"feed_id:{result.input['feed_id']}", f"feed_category:{result.input['feed_category']}"} <= tags
            assert seen["traceName"] == f"feed_id:{result.input['feed_id']}"  # one value per trace: its feed
            routed_by_title += "desired_style" not in result.input
    assert routed_by_title == 2  # smoke-008 and smoke-009 carry the style their title routed them to


def shipped_widgets() -> list[dict[str, Any]]:
    """The widgets of the shipped dashboard file."""
    return list(yaml.safe_load(DASHBOARD.read_text(encoding="utf-8"))["widgets"])


def local_scores(stores: dict[str, RunStore], name: str) -> list[tuple[ItemResult, float]]:
    """Every measured score `name` of the three runs, with its item."""
    found = []
    for store in stores.values():
        for result in store.iter_results():
            for score in result.scores:
                if score.name == name and isinstance(score.value, int | float):
                    found.append((result, float(score.value)))
    return found


def test_every_shipped_widget_shows_data_grouped_as_its_title_says(
    three_runs: dict[str, RunStore], fake_langfuse: FakeLangfuse, project_dir: Path
) -> None:
    (project_dir / "dashboards").mkdir()
    shutil.copy(DASHBOARD, project_dir / "dashboards" / DASHBOARD.name)
    sync_dashboards(load_project(project_dir))
    smoke = three_runs["smoke"]
    thumbs = project_dir / "thumbs.jsonl"
    rated = {"smoke-001": 1.0, "smoke-005": -1.0}
    rows = [{"run_id": smoke.run_id, "item_id": i, "key": "online_thumb", "value": v} for i, v in rated.items()]
    thumbs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import_scores(project_dir, thumbs)
    ratings = [(r, rated[r.item_id]) for r in smoke.iter_results() if r.item_id in rated]

    widgets = shipped_widgets()
    styled = by_feed_widgets = 0
    for widget in widgets:
        title = widget["name"]
        drawn = fake_langfuse.widget_rows(title)
        assert drawn, f"widget {title!r} shows no data"
        score_name = next(f["value"] for f in widget["filters"] if f["column"] == "name")
        styles = [v for f in widget["filters"] if f["column"] == "tags" for v in f["value"]]
        expected = ratings if score_name == "online_thumb" else local_scores(three_runs, score_name)
        if widget["chart"] in ("LINE_TIME_SERIES", "BAR_TIME_SERIES", "AREA_TIME_SERIES"):
            assert all(row["time"] for row in drawn), title
        if styles:  # one style per widget, named in its title
            assert len(styles) == 1, f"{title}: a widget with several styles draws one bar per tag set"
            style = styles[0]
            assert style.removeprefix("desired_style:") in title.split(" — ")[-1], title
            expected = [(r, v) for r, v in expected if f"desired_style:{style_of(r)}" == style]
            styled += 1
        counted = fake_langfuse.widget_rows(title, metrics=[{"measure": "count", "agg": "count"}])
        assert sum(row["count_count"] for row in counted) == len(expected) > 0, title
        if widget.get("dimensions") == ["traceVersion"]:
            assert {row["traceVersion"] for row in drawn} == {r.prompt for r, _ in expected}, title
            for row in drawn:
                values = [v for r, v in expected if r.prompt == row["traceVersion"]]
                assert row["avg_value"] == pytest.approx(sum(values) / len(values)), title
        assert "tags" not in widget.get("dimensions", []), f"{title}: `tags` draws one bar per distinct tag set"
        if "by feed" in title:  # one row per feed, each the mean of that feed's scores across the runs
            by_feed: dict[str, list[float]] = {}
            for result, value in expected:
                by_feed.setdefault(f"feed_id:{result.input['feed_id']}", []).append(value)
            (dimension,) = widget["dimensions"]
            drawn_by_feed = {row[dimension]: row["avg_value"] for row in drawn}
            assert len(drawn) == len(drawn_by_feed) == len(by_feed) > 1, title
            assert drawn_by_feed == pytest.approx({feed: sum(v) / len(v) for feed, v in by_feed.items()}), title
            by_feed_widgets += 1
    assert styled >= 6  # every "by style" view is one widget per style
    assert by_feed_widgets == 1


# ---- number tiles -------------------------------------------------------------------------------------------
GRID_WIDTHS = (1000, 1152, 1400, 1700)
"""Dashboard grid widths (px), from a small laptop to a wide screen: the window less Langfuse's sidebar."""


def test_the_fake_draws_a_narrow_number_tile_as_a_v4_16_server_did() -> None:
    assert number_tile_text(0.25, {"width": 3, "height": 5}, 1152) == "0.3"  # seen on v4.16: 3 columns wide
    assert number_tile_text(0.25, {"width": 6, "height": 4}, 1152) == "0.25"
    assert number_tile_text(3.2634, {"width": 6, "height": 4}, 1152) == "3.263"  # at most 3 decimals


@pytest.mark.parametrize("grid_width", GRID_WIDTHS)
def test_every_shipped_number_tile_shows_its_value_to_the_hundredth(grid_width: int) -> None:
    tiles = [w for w in shipped_widgets() if w["chart"] == "NUMBER"]
    assert len(tiles) >= 8
    for widget in tiles:
        for value in (0.25, -0.25, 0.875, 3.263):  # rates, thumbs (-1..1), 1-5 scores
            shown = number_tile_text(value, widget["placement"], grid_width)
            assert abs(float(shown) - value) <= 0.005 + 1e-9, (widget["name"], widget["placement"], value, shown)
