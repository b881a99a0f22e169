"""Assemble what the HTML report shows from stored runs: headers, ordered scores, gates with the items that
broke them, per-item rows (aligned by item id across runs), the comparison or ranking, each track's section.

The result is a plain JSON-ready dict; `page.render_page` turns it into HTML. Long texts are clipped to a
budget so a 10,000-item report stays small; a clipped text says so and where the full text is.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.report.run_reader import (
    MAX_CLIP,
    MIN_CLIP,
    Clipper,
    ReportOptions,
    RunReader,
    change_fraction,
    direction_of,
)
from scoregate.store.run_labels import with_labels
from scoregate.store.run_store import RunStore
from scoregate.tracks.registry import all_tracks


def _ranking_metric(readers: Sequence[RunReader], asked: str | None) -> str:
    if asked is not None:
        return asked
    shared = [set(r.values) for r in readers]
    common = set.intersection(*shared) if shared else set()
    if "eqs" in common:
        return "eqs"
    for key in readers[0].order:
        if key in common:
            return key
    raise ScoregateError("the runs share no numeric score to rank them by", hint="report runs of one experiment")


def _line_count(store: RunStore) -> int:
    with (store.directory / "results.jsonl").open("rb") as handle:
        return sum(1 for _ in handle)


def build_report(stores: Sequence[RunStore], options: ReportOptions | None = None) -> dict[str, Any]:
    """Return the report model of one run, or of several runs compared item by item (the first is the baseline)."""
    options = options or ReportOptions()
    if not stores:
        raise ScoregateError("name at least one run", hint="list runs with `scoregate runs list`")
    ids = [s.run_id for s in stores]
    if len(set(ids)) != len(ids):
        raise ScoregateError(f"a run is named twice: {', '.join(ids)}", hint="name each run once")
    counts = [min(_line_count(s), options.max_items) for s in stores]
    limit = max(MIN_CLIP, min(MAX_CLIP, options.text_budget // max(1, 3 * sum(counts))))
    clip = Clipper(limit)
    readers = [RunReader(s, clip, options) for s in stores]
    items: dict[str, dict[str, Any]] = {}
    for position, reader in enumerate(readers):
        for result in reader.store.iter_results():  # streamed: memory holds only the rows the table keeps
            row = reader.row(result, keep=result.index < options.max_items)
            if row is None:
                continue
            item = items.get(result.item_id)
            if item is None:
                item = items[result.item_id] = {
                    "id": result.item_id, "i": result.index, "in": clip(result.input),
                    "x": clip(result.expected_output), "r": [None] * len(readers),
                }  # fmt: skip
            item["r"][position] = row
    rows = sorted(items.values(), key=lambda it: it["i"])
    notes = [
        f"the item table lists the first {options.max_items:,} of run {r.store.run_id}'s {r.items:,} items "
        "(the charts, gates and statistics count them all; results.jsonl holds every item)"
        for r in readers
        if r.items > options.max_items
    ]
    report: dict[str, Any] = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "runs": with_labels([r.header() for r in readers]),
        "items": rows,
        "distributions": [{"values": r.values, "latencies": r.latencies, "costs": r.costs} for r in readers],
        "clip_limit": limit,
        "clipped": clip.clipped,
        "comparison": None,
        "ranking": None,
        "leaderboard": None,
        "track_titles": {t.name: t.title for t in all_tracks()},
        "notes": notes,
    }
    if len(readers) == 1:
        report["leaderboard"] = _leaderboard(readers[0], options)
    if len(readers) >= 2:
        _add_comparisons(report, stores, readers, options)
    return report


def _leaderboard(reader: RunReader, options: ReportOptions) -> dict[str, Any] | None:
    """The leaderboard of the run's experiment, computed now from the stored runs (not a stale leaderboard.json);
    None when fewer than two valid runs of the experiment count (one run's board repeats its headline)."""
    from scoregate.analysis.leaderboard import default_metric, leaderboard_of
    from scoregate.store.valid_runs import valid_runs

    receipts = reader.manifest.receipts
    experiment = receipts.experiment
    metric = options.metric or default_metric(reader.summary, receipts)
    if experiment is None or metric is None:
        return None
    found = valid_runs(reader.store.directory.parent, experiment=str(experiment))
    if sum(1 for _store, _manifest, summary in found[0] if metric in summary.scores) < 2:
        return None  # checked before reading any results: a lone run of 100,000 items costs no second pass
    try:
        board = leaderboard_of(
            *found, source=str(reader.store.directory.parent), experiment=str(experiment), metric=metric,
            lower_is_better=direction_of(metric, reader.manifest) == "lower", min_coverage=options.min_coverage,
        )  # fmt: skip
    except ScoregateError:
        return None
    if sum(entry["runs"] for entry in board["entries"]) < 2:
        return None
    board["this_run"] = reader.store.run_id
    return board


def _add_comparisons(
    report: dict[str, Any], stores: Sequence[RunStore], readers: Sequence[RunReader], options: ReportOptions
) -> None:
    from scoregate.analysis.compare_runs import compare_runs
    from scoregate.analysis.model_ranking import rank_runs
    from scoregate.tracks.registry import ranked_metrics

    for item in report["items"]:
        a, b = item["r"][0], item["r"][1]
        item["d"] = round(change_fraction(a["o"], b["o"]), 4) if a is not None and b is not None else None
    alpha = 1 - options.confidence
    if len(stores) == 2:
        try:
            comparison = compare_runs(
                stores[0],
                stores[1],
                directions=options.directions,
                alpha=alpha,
                resamples=options.resamples,
                seed=options.seed,
            )
            report["comparison"] = comparison.to_dict()
            for key, block in (options.corrected or {}).items():
                if key in report["comparison"]["scores"]:
                    report["comparison"]["scores"][key]["corrected"] = dict(block)
        except ScoregateError as exc:
            report["notes"].append(f"no paired comparison: {exc.render()}")
    models = {run["model"] for run in report["runs"]}
    if len(stores) >= 3 or len(models) == len(stores):
        try:
            metric = _ranking_metric(readers, options.metric)
            ranking = rank_runs(
                stores,
                metric=metric,
                directions=options.directions,
                alpha=alpha,
                resamples=options.resamples,
                seed=options.seed,
                tracks=ranked_metrics(),
            )
            report["ranking"] = ranking.to_dict()
        except ScoregateError as exc:
            report["notes"].append(f"no ranking: {exc.render()}")
