"""Where judge calibration reads its pairs: a score file (`.jsonl`, `.json` array, `.csv`), or stored runs with the
project's imported human feedback. The statistics are `scoregate.analysis.judge_calibration`'s."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from scoregate.analysis.judge_calibration import (
    CalibrationReport,
    FeedbackIndex,
    ScorePairs,
    add_run_items,
    compute,
    pairs_from_records,
    require_human_ratings,
)
from scoregate.app.calibration_request import CalibrationRequest
from scoregate.errors import ScoregateError, UsageError
from scoregate.store.feedback import TRACE_LINKS_KEY, load_feedback
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore
from scoregate.support.json_errors import Unit, json_problem

FILE_SUFFIXES = (".jsonl", ".json", ".csv")


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
        data = _load_json(path, path.read_text(encoding="utf-8"), "file")
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
                record = _load_json(f"{path}:{line_no}", line, "line")
                if not isinstance(record, dict):
                    raise ScoregateError("expected one JSON object per line", where=f"{path}:{line_no}")
                yield f"{path}:{line_no}", record


def _load_json(where: Path | str, text: str, unit: Unit) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScoregateError(json_problem(exc, unit=unit), where=str(where), hint="fix or remove the record") from None


def pairs_from_file(path: Path, judge_key: str, human_key: str, *, document_key: str | None = None) -> ScorePairs:
    """Read one (judge, human[, document]) triple per record of a score file; raise ValidationFailed on bad values."""
    return pairs_from_records(iter_records(path), str(path), judge_key, human_key, document_key=document_key)


def calibrate_file(request: CalibrationRequest) -> CalibrationReport:
    """Return how well the judge column of the request's score file agrees with its human column."""
    if request.file is None:
        raise UsageError("a file calibration reads --file FILE; for stored runs use `calibrate_runs`", option="--file")
    judge_key, human_key, document_key = request.judge_key, request.human_key, request.document_key
    pairs = pairs_from_file(request.file, judge_key, human_key, document_key=document_key)
    return compute(
        pairs, judge_key, human_key, document_key=document_key, scale=request.scale,
        resamples=request.resamples or 2000, seed=request.seed or 0, corrected_labels=request.corrected_labels,
    )  # fmt: skip


def pairs_from_runs(
    stores: Sequence[RunStore],
    root: Path,
    judge_key: str,
    human_key: str,
    *,
    document_key: str | None = None,
    results: Callable[[RunStore], Iterable[ItemResult]] | None = None,
    source: str | None = None,
) -> ScorePairs:
    """Pair each stored item's judge score with its human rating, over one or more runs (`results` replaces a run's
    stored results, e.g. by the live judges' scores; `source` then says where the judge scores come from).

    Documents: `document_key` when given, else the item id when several runs are pooled (each item is
    then a document with one output per run, as SummEval has one summary per system), else none.
    """
    if not document_key and len(stores) > 1:
        document_key = "item_id"
    runs = "runs " + ", ".join(s.run_id for s in stores)
    pairs = ScorePairs(source=f"{source} on {runs}" if source else runs, documents=[] if document_key else None)
    feedback = FeedbackIndex(load_feedback(root).values())
    for store in stores:
        traces: dict[str, str] = store.links.get(TRACE_LINKS_KEY) or {}
        rows = results(store) if results else store.iter_results()
        add_run_items(pairs, store.run_id, rows, traces, judge_key, human_key, feedback, document_key=document_key)
    require_human_ratings(pairs, human_key, feedback)
    return pairs
