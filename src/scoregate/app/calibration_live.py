"""Calibration on the live judges' scores (`calibrate --live`): one figure belongs to one deployed evaluator version.

`scores pull RUN` keeps each live judge score of a run's traces with the evaluator version that wrote it
(feedback/live_judges.jsonl). A calibration on them replaces the run's own judge score of each item by the live
one of a single evaluator version: the only one, or the one `--evaluator-version` names. Scores of two versions
are never pooled into one figure: that is refused, naming each version and how many items it scored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.store.live_judges import LIVE_SCORES_FILE, live_records
from scoregate.store.records import ItemResult, Score
from scoregate.store.run_store import RunStore

LiveValues = dict[tuple[str, str], Any]
"""(run id, item id) → the live score's value."""


def live_values(root: Path, runs: Sequence[str], judge_key: str) -> dict[str, LiveValues]:
    """Evaluator version id → the live values of `judge_key` it wrote on the runs' items (a later line wins)."""
    by_version: dict[str, LiveValues] = {}
    for record in live_records(root):
        version = record.get("evaluator_version_id")
        if record.get("key") != judge_key or record.get("run_id") not in runs or not version:
            continue
        by_version.setdefault(str(version), {})[(str(record["run_id"]), str(record["item_id"]))] = record["value"]
    return by_version


def choose_version(by_version: dict[str, LiveValues], wanted: str | None, judge_key: str, runs: Sequence[str]) -> str:
    """The one evaluator version a live calibration measures; raise when there is none or the choice is open."""
    named = ", ".join(runs)
    counts = ", ".join(f"{v}: {len(values)} items" for v, values in sorted(by_version.items(), key=_most))
    if not by_version:
        raise ScoregateError(
            f"no live score {judge_key!r} of run(s) {named} in {LIVE_SCORES_FILE}",
            hint="run `scoregate scores pull RUN` once a live judge has scored the run's traces",
        )
    if wanted is not None:
        if wanted not in by_version:
            raise ScoregateError(
                f"no live score of evaluator version {wanted!r} for {judge_key!r} of run(s) {named} "
                f"(versions: {counts})"
            )
        return wanted
    if len(by_version) > 1:
        raise ScoregateError(
            f"the live scores {judge_key!r} of run(s) {named} come from {len(by_version)} evaluator versions "
            f"({counts}): one figure measures one version",
            hint="pass `--evaluator-version ID` to calibrate one of them",
        )
    return next(iter(by_version))


def _most(entry: tuple[str, LiveValues]) -> tuple[int, str]:
    return -len(entry[1]), entry[0]


def with_live_scores(store: RunStore, values: LiveValues, judge_key: str, version: str) -> Iterator[ItemResult]:
    """The run's results with the judge score of each item replaced by the live one (null when it has none)."""
    for result in store.iter_results():
        value = values.get((store.run_id, result.item_id))
        old = result.score(judge_key)
        data_type = old.data_type if old is not None else "numeric"
        live = (
            Score(name=judge_key, value=value, data_type=data_type, evaluator=f"live {version}")
            if value is not None
            else Score.missing(judge_key, data_type, f"live {version}", f"no live score of evaluator version {version}")
        )
        kept = [s for s in result.scores if s.name != judge_key]
        yield dataclasses.replace(result, scores=[*kept, live])
