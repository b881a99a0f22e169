"""Judge calibration end to end: gather (judge, human) pairs from stored runs or any score file, and compute.

Sources of pairs:
- a file (`.jsonl`, `.json` array, `.csv`) with one record per item; the judge, human and document
  columns are named by dotted paths into each record (`predict_scores.consistency`), an exact key
  (a CSV header such as `human.relevance`) winning over the dotted reading;
- one or more scoregate runs: the judge is a stored score; the human rating comes from imported
  feedback (`feedback/scores.jsonl`, mean over raters) for that run's item, else from the item's
  `metadata.human` when the run's output is the item's `expected_output` (gold ratings rate the
  gold summary, so they say nothing about another output).

Saving, and checking that a saved calibration still holds, live in `scoregate.app.calibration_runs`.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoregate.analysis.calibration import Calibration, calibrate
from scoregate.errors import ScoregateError, ValidationFailed
from scoregate.store.feedback import TRACE_LINKS_KEY, load_feedback
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore

MAX_PROBLEMS = 25
MISSING_MARKERS = frozenset({"", "na", "n/a", "nan", "null", "none"})
RUN_DOCUMENT_ROOTS = ("item_id", "input", "metadata", "prompt")
FILE_SUFFIXES = (".jsonl", ".json", ".csv")


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

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return {
            "source": self.source,
            "judge_key": self.judge_key,
            "human_key": self.human_key,
            "document_key": self.document_key,
            "excluded": self.excluded,
            **self.calibration.to_dict(),
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


def iter_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (where, record) from a `.jsonl`, `.json` (array of objects) or `.csv` file."""
    suffix = path.suffix.lower()
    if suffix not in FILE_SUFFIXES:
        raise ScoregateError(
            f"cannot read {path.name}: unknown file type", hint="give a .jsonl, .json (array of objects) or .csv file"
        )
    if not path.is_file():
        raise ScoregateError(f"no file {path}", hint="check the path given to --file")
    if suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as handle:
            for line_no, row in enumerate(csv.DictReader(handle), start=2):
                yield f"{path}:{line_no}", dict(row)
        return
    if suffix == ".json":
        data = _load_json(path, path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise ScoregateError("expected a JSON array of records", where=str(path), hint="or give a .jsonl file")
        for index, record in enumerate(data):
            if not isinstance(record, dict):
                raise ScoregateError("expected a JSON object", where=f"{path}[{index}]")
            yield f"{path}[{index}]", record
        return
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if line.strip():
                record = _load_json(f"{path}:{line_no}", line)
                if not isinstance(record, dict):
                    raise ScoregateError("expected one JSON object per line", where=f"{path}:{line_no}")
                yield f"{path}:{line_no}", record


def _load_json(where: Path | str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScoregateError(f"not valid JSON ({exc.msg} at line {exc.lineno})", where=str(where)) from None


def pairs_from_file(path: Path, judge_key: str, human_key: str, *, document_key: str | None = None) -> ScorePairs:
    """Read one (judge, human[, document]) triple per record of a score file; raise ValidationFailed on bad values."""
    pairs = ScorePairs(source=str(path), documents=[] if document_key else None)
    problems: list[str] = []
    found = {judge_key: 0, human_key: 0}
    first: dict[str, Any] | None = None
    for where, record in iter_records(path):
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
            problems.append(f"{path}: stopped after {MAX_PROBLEMS} problems")
            break
    if first is None:
        raise ScoregateError(f"{path} holds no records", hint="give a file with one record per rated item")
    problems += [
        f"{path}: no record has a value at {key!r}; the first record's keys are: {', '.join(map(str, first))}"
        for key, count in found.items()
        if count == 0
    ]
    if problems:
        raise ValidationFailed(problems, hint="name the columns with --judge-key/--human-key/--document-key")
    return pairs


class FeedbackIndex:
    """Imported human scores (feedback/scores.jsonl) by (run, item, key) and by (trace, key)."""

    def __init__(self, root: Path) -> None:
        self.by_item: dict[tuple[str, str, str], list[float]] = {}
        self.by_trace: dict[tuple[str, str], list[float]] = {}
        for record in load_feedback(root).values():
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


def pairs_from_runs(
    stores: Sequence[RunStore],
    root: Path,
    judge_key: str,
    human_key: str,
    *,
    document_key: str | None = None,
) -> ScorePairs:
    """Pair each stored item's judge score with its human rating, over one or more runs.

    Documents: `document_key` when given, else the item id when several runs are pooled (each item is
    then a document with one output per run, as SummEval has one summary per system), else none.
    """
    if not document_key and len(stores) > 1:
        document_key = "item_id"
    pairs = ScorePairs(source="runs " + ", ".join(s.run_id for s in stores), documents=[] if document_key else None)
    feedback = FeedbackIndex(root)
    for store in stores:
        traces: dict[str, str] = store.links.get(TRACE_LINKS_KEY) or {}
        seen_key = False
        for result in store.iter_results():
            seen_key = seen_key or result.score(judge_key) is not None
            judge, judge_why = _judge_value(result, judge_key)
            human, human_why = _human_rating(result, store.run_id, traces.get(result.item_id), human_key, feedback)
            document = _run_document(result, document_key) if document_key else None
            pairs.add(judge, human, document, why=judge_why if judge is None else human_why)
            pairs.items.append(result.item_id)
        if not seen_key:
            raise ScoregateError(
                f"run {store.run_id} has no score {judge_key!r}",
                hint="name a score key the run measured (see `scoregate runs show RUN_ID`)",
            )
    if not any(h is not None for h in pairs.human):
        keys = ", ".join(sorted(feedback.keys())) or "none"
        raise ScoregateError(
            f"no item of {pairs.source} has a human {human_key!r} rating (imported keys: {keys})",
            hint="import ratings with `scoregate scores import FILE`, or calibrate a run of gold_v1 whose "
            "outputs are the gold summaries (metadata.human rates those)",
        )
    return pairs


def compute(
    pairs: ScorePairs,
    judge_key: str,
    human_key: str,
    *,
    document_key: str | None = None,
    scale: tuple[int, int] | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> CalibrationReport:
    """Return the calibration of gathered pairs; a rating off `scale` is a ScoregateError."""
    try:
        result = calibrate(
            pairs.judge, pairs.human, documents=pairs.documents, scale=scale, resamples=resamples, seed=seed
        )
    except ValueError as exc:
        raise ScoregateError(
            str(exc), where=pairs.source, hint="pass the --scale both raters use, or leave it out"
        ) from None
    return CalibrationReport(
        source=pairs.source,
        judge_key=judge_key,
        human_key=human_key,
        document_key=document_key if pairs.documents is not None else None,
        calibration=result,
        excluded=dict(pairs.excluded.most_common()),
    )


def calibrate_file(
    path: Path,
    judge_key: str,
    human_key: str,
    *,
    document_key: str | None = None,
    scale: tuple[int, int] | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> CalibrationReport:
    """Return how well the judge column of a score file agrees with its human column."""
    pairs = pairs_from_file(path, judge_key, human_key, document_key=document_key)
    return compute(pairs, judge_key, human_key, document_key=document_key, scale=scale, resamples=resamples, seed=seed)
