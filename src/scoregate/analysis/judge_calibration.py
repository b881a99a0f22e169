"""Judge calibration: (judge, human) pairs from stored runs' items or a score file's records, and the statistics.

Sources of pairs:
- a file (`.jsonl`, `.json` array, `.csv`) with one record per item; the judge, human and document
  columns are named by dotted paths into each record (`predict_scores.consistency`), an exact key
  (a CSV header such as `human.relevance`) winning over the dotted reading;
- one or more scoregate runs: the judge is a stored score; the human rating comes from imported
  feedback (`feedback/scores.jsonl`, mean over raters) for that run's item, else from the item's
  `metadata.human` when the run's output is the item's `expected_output` (gold ratings rate the
  gold summary, so they say nothing about another output).

Reading the files and runs is `scoregate.app.calibration_sources`'s; saving, and checking that a saved
calibration still holds, live in `scoregate.app.calibration_runs`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scoregate.analysis.calibration import Calibration, calibrate
from scoregate.analysis.corrected_check import HeldOutCheck, held_out_check
from scoregate.errors import ScoregateError, ValidationFailed
from scoregate.store.records import ItemResult

MAX_PROBLEMS = 25
MISSING_MARKERS = frozenset({"", "na", "n/a", "nan", "null", "none"})
RUN_DOCUMENT_ROOTS = ("item_id", "input", "metadata", "prompt")


@dataclass
class ScorePairs:
    """Per-item judge and human scores (same index; None = not measured), and why items lack a pair."""

    source: str
    judge: list[float | None] = field(default_factory=list)
    human: list[float | None] = field(default_factory=list)
    documents: list[str] | None = None
    excluded: Counter[str] = field(default_factory=Counter)
    items: list[str] = field(default_factory=list)
    """Item ids of a run's pairs (same index; empty for a file)."""

    def add(self, judge: float | None, human: float | None, document: str | None, *, why: str | None = None) -> None:
        """Append one item; `why` (or a default) is counted when either side is missing."""
        self.judge.append(judge)
        self.human.append(human)
        if self.documents is not None:
            self.documents.append(document or "")
        if judge is None or human is None:
            self.excluded[why or ("no judge score" if judge is None else "no human score")] += 1


@dataclass(frozen=True)
class CalibrationReport:
    """A calibration and what it was computed from."""

    source: str
    judge_key: str
    human_key: str
    document_key: str | None
    calibration: Calibration
    excluded: dict[str, int]
    held_out: HeldOutCheck | None = None
    """The corrected mean checked on held-back human ratings, when asked (`corrected_labels`)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        held_out = {"held_out": self.held_out.to_dict()} if self.held_out is not None else {}
        return {
            "source": self.source,
            "judge_key": self.judge_key,
            "human_key": self.human_key,
            "document_key": self.document_key,
            "excluded": self.excluded,
            **self.calibration.to_dict(),
            **held_out,
        }


def parse_scale(text: str) -> tuple[int, int]:
    """Parse `LOW,HIGH` (e.g. `1,5`) into integers; raise ScoregateError on anything else."""
    parts = [p.strip() for p in text.split(",")]
    try:
        low, high = (int(p) for p in parts)
    except ValueError:
        raise ScoregateError(
            f"--scale {text!r} is not two integers", hint="write the rating scale as LOW,HIGH, e.g. --scale 1,5"
        ) from None
    if low >= high:
        raise ScoregateError(f"--scale {text!r}: LOW must be below HIGH", hint="e.g. --scale 1,5")
    return low, high


def lookup(record: Any, path: str) -> Any:
    """Return the value at `path` in a record: the exact key first, else a dotted walk; None when absent."""
    if isinstance(record, dict) and path in record:
        return record[path]
    value = record
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def as_score(value: Any) -> float | None:
    """Return a score as a float (None when missing or NaN); raise ValueError when it is not a number."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        if value.strip().lower() in MISSING_MARKERS:
            return None
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a number") from None
        return number if math.isfinite(number) else None
    raise ValueError(f"{value!r} is not a number")


def pairs_from_records(
    records: Iterable[tuple[str, dict[str, Any]]],
    source: str,
    judge_key: str,
    human_key: str,
    *,
    document_key: str | None = None,
) -> ScorePairs:
    """Read one (judge, human[, document]) triple per (where, record) of a score file named `source`; raise
    ValidationFailed on bad values."""
    pairs = ScorePairs(source=source, documents=[] if document_key else None)
    problems: list[str] = []
    found = {judge_key: 0, human_key: 0}
    first: dict[str, Any] | None = None
    for where, record in records:
        first = record if first is None else first
        values: dict[str, float | None] = {}
        for key in (judge_key, human_key):
            try:
                values[key] = as_score(lookup(record, key))
            except ValueError as exc:
                problems.append(f"{where}: {key}: {exc}")
                values[key] = None
            found[key] += values[key] is not None
        document = None
        if document_key is not None:
            raw_document = lookup(record, document_key)
            if raw_document is None or isinstance(raw_document, dict | list):
                problems.append(f"{where}: {document_key}: needs a document id (text or number), got {raw_document!r}")
            document = str(raw_document)
        pairs.add(values[judge_key], values[human_key], document)
        if len(problems) >= MAX_PROBLEMS:
            problems.append(f"{source}: stopped after {MAX_PROBLEMS} problems")
            break
    if first is None:
        raise ScoregateError(f"{source} holds no records", hint="give a file with one record per rated item")
    problems += [
        f"{source}: no record has a value at {key!r}; the first record's keys are: {', '.join(map(str, first))}"
        for key, count in found.items()
        if count == 0
    ]
    if problems:
        raise ValidationFailed(problems, hint="name the columns with --judge-key/--human-key/--document-key")
    return pairs


class FeedbackIndex:
    """Imported human scores (the records of feedback/scores.jsonl) by (run, item, key) and by (trace, key)."""

    def __init__(self, records: Iterable[dict[str, Any]]) -> None:
        self.by_item: dict[tuple[str, str, str], list[float]] = {}
        self.by_trace: dict[tuple[str, str], list[float]] = {}
        for record in records:
            value = record.get("value")
            if record.get("data_type") != "NUMERIC" or isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if record.get("run_id") and record.get("item_id"):
                self.by_item.setdefault((record["run_id"], record["item_id"], record["key"]), []).append(value)
            elif record.get("trace_id"):
                self.by_trace.setdefault((record["trace_id"], record["key"]), []).append(value)

    def keys(self) -> set[str]:
        """Every numeric key imported."""
        return {k[2] for k in self.by_item} | {k[1] for k in self.by_trace}

    def rating(self, run_id: str, item_id: str, trace_id: str | None, key: str) -> float | None:
        """Return the mean over raters of `key` for this item of this run (None when nobody rated it)."""
        values = self.by_item.get((run_id, item_id, key), [])
        if trace_id is not None:
            values = values + self.by_trace.get((trace_id, key), [])
        return sum(values) / len(values) if values else None


def gold_field(human_key: str) -> str:
    """Return the `metadata.human` field a human key reads: `human_faithfulness` → `faithfulness`."""
    return human_key.removeprefix("human_")


def _same_output(result: ItemResult) -> bool:
    output, expected = result.output, result.expected_output
    if isinstance(output, str) and isinstance(expected, str):
        return output.strip() == expected.strip()
    return expected is not None and output == expected


def _human_rating(
    result: ItemResult, run_id: str, trace_id: str | None, human_key: str, feedback: FeedbackIndex
) -> tuple[float | None, str | None]:
    rated = feedback.rating(run_id, result.item_id, trace_id, human_key)
    if rated is not None:
        return rated, None
    gold = result.metadata.get("human")
    if isinstance(gold, dict) and gold_field(human_key) in gold:
        if not _same_output(result):
            return None, "metadata.human rates the item's expected_output, and this run's output differs"
        try:
            return as_score(gold[gold_field(human_key)]), f"metadata.human.{gold_field(human_key)} is empty"
        except ValueError as exc:
            raise ScoregateError(
                f"item {result.item_id!r}: metadata.human.{gold_field(human_key)}: {exc}", where=f"run {run_id}"
            ) from None
    return None, f"no human {human_key} for the item (import ratings with `scoregate scores import`)"


def _judge_value(result: ItemResult, judge_key: str) -> tuple[float | None, str | None]:
    score = result.score(judge_key)
    if score is None:
        return None, f"the item has no {judge_key} score"
    if score.value is None:
        return None, f"judge not measured: {score.reason or 'no reason recorded'}"[:160]
    try:
        return as_score(score.value), None
    except ValueError:
        raise ScoregateError(
            f"score {judge_key!r} is {score.data_type}, not numeric ({score.value!r})",
            hint="calibrate a numeric or boolean judge score",
        ) from None


def _run_document(result: ItemResult, document_key: str) -> str:
    root = document_key.split(".", 1)[0]
    if root not in RUN_DOCUMENT_ROOTS:
        raise ScoregateError(
            f"--document-key {document_key!r}: a run's document id is read from item_id, input.<field>, "
            "metadata.<field> or prompt",
        )
    value = lookup(
        {"item_id": result.item_id, "input": result.input, "metadata": result.metadata, "prompt": result.prompt},
        document_key,
    )
    return "" if value is None else str(value)


def add_run_items(
    pairs: ScorePairs,
    run_id: str,
    results: Iterable[ItemResult],
    traces: Mapping[str, str],
    judge_key: str,
    human_key: str,
    feedback: FeedbackIndex,
    *,
    document_key: str | None = None,
) -> None:
    """Pair each item of one run (its `traces`: item id → Langfuse trace id) with its human rating."""
    seen_key = False
    for result in results:
        seen_key = seen_key or result.score(judge_key) is not None
        judge, judge_why = _judge_value(result, judge_key)
        human, human_why = _human_rating(result, run_id, traces.get(result.item_id), human_key, feedback)
        document = _run_document(result, document_key) if document_key else None
        pairs.add(judge, human, document, why=judge_why if judge is None else human_why)
        pairs.items.append(result.item_id)
    if not seen_key:
        raise ScoregateError(
            f"run {run_id} has no score {judge_key!r}",
            hint="name a score key the run measured (see `scoregate runs show RUN_ID`)",
        )


def require_human_ratings(pairs: ScorePairs, human_key: str, feedback: FeedbackIndex) -> None:
    """Raise a ScoregateError saying where ratings come from when no paired item has a human rating."""
    if not any(h is not None for h in pairs.human):
        keys = ", ".join(sorted(feedback.keys())) or "none"
        raise ScoregateError(
            f"no item of {pairs.source} has a human {human_key!r} rating (imported keys: {keys})",
            hint="import ratings with `scoregate scores import FILE`, or calibrate a run of gold_v1 whose "
            "outputs are the gold summaries (metadata.human rates those)",
        )


def compute(
    pairs: ScorePairs,
    judge_key: str,
    human_key: str,
    *,
    document_key: str | None = None,
    scale: tuple[int, int] | None = None,
    resamples: int = 2000,
    seed: int = 0,
    corrected_labels: int | None = None,
) -> CalibrationReport:
    """Return the calibration of gathered pairs; a rating off `scale` is a ScoregateError. With `corrected_labels`,
    also the corrected mean of the items outside a random calibration sample of that size (`HeldOutCheck`)."""
    try:
        result = calibrate(
            pairs.judge, pairs.human, documents=pairs.documents, scale=scale, resamples=resamples, seed=seed
        )
    except ValueError as exc:
        raise ScoregateError(
            str(exc), where=pairs.source, hint="pass the --scale both raters use, or leave it out"
        ) from None
    held_out = None
    if corrected_labels is not None:
        try:
            held_out = held_out_check(pairs.judge, pairs.human, corrected_labels, seed=seed)
        except ValueError as exc:
            raise ScoregateError(f"--corrected-labels: {exc}", where=pairs.source) from None
    return CalibrationReport(
        source=pairs.source,
        judge_key=judge_key,
        human_key=human_key,
        document_key=document_key if pairs.documents is not None else None,
        calibration=result,
        excluded=dict(pairs.excluded.most_common()),
        held_out=held_out,
    )
