"""Hard cases: append a run's worst items to `datasets/hardcases.jsonl`, deduplicated by id, source recorded.

Items are chosen by a condition on one stored score, `<score> <op> <number>` (ops < <= > >= ==),
parsed by a small grammar (never evaluated as code). Items whose score is null are not chosen but
counted. The chosen items are sorted worst first — lowest first for `<`/`<=`, highest first for
`>`/`>=`, run order for `==` — and each is written as a dataset item (the stored input and expected
output, the item's own metadata) with where it came from under `metadata`.
"""

from __future__ import annotations

import json
import operator
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from pydantic import TypeAdapter, ValidationError

from scoregate.catalog.datasets import iter_items
from scoregate.catalog.models import DatasetItem, DatasetMeta
from scoregate.catalog.names import name_problem
from scoregate.catalog.yaml_files import format_validation_error, load_model
from scoregate.errors import ScoregateError, ValidationFailed
from scoregate.store.invalidation import refuse_invalid
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore

DEFAULT_DATASET = "hardcases"
ENGINE_METADATA = ("inferred_input",)
"""Metadata keys the engine adds to a stored result, which are not part of the item."""
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
}
_WHERE = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][A-Za-z0-9_.\-]*)\s*(?P<op><=|>=|==|<|>)\s*"
    r"(?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)
_DATASET_META = TypeAdapter(DatasetMeta)


@dataclass(frozen=True)
class Condition:
    """A parsed `--where`: one score compared with a number."""

    metric: str
    op: str
    threshold: float

    def holds(self, value: float) -> bool:
        """True when `value` satisfies the condition."""
        return _OPS[self.op](value, self.threshold)

    def worst_first(self, chosen: list[tuple[float, ItemResult]]) -> list[tuple[float, ItemResult]]:
        """Return chosen (value, result) pairs with the worst first (ties in run order)."""
        if self.op in ("<", "<="):
            return sorted(chosen, key=lambda pair: (pair[0], pair[1].index))
        if self.op in (">", ">="):
            return sorted(chosen, key=lambda pair: (-pair[0], pair[1].index))
        return sorted(chosen, key=lambda pair: pair[1].index)

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.threshold:g}"


def parse_where(expression: str) -> Condition:
    """Parse `<score> <op> <number>` (ops < <= > >= ==); raise ScoregateError naming a bad expression."""
    found = _WHERE.match(expression)
    if found is None:
        raise ScoregateError(
            f"cannot read --where {expression!r}",
            hint="write one comparison `<score> <op> <number>` with op one of < <= > >= ==, "
            'e.g. --where "WeightedQuality < 3.5"',
        )
    return Condition(found["metric"], found["op"], float(found["number"]))


@dataclass
class HardcasesReport:
    """What `hardcases add` chose, appended and skipped."""

    run_id: str
    dataset: Path
    condition: Condition
    items_in_run: int = 0
    matched: int = 0
    appended: list[tuple[str, float]] = field(default_factory=list)
    already_present: list[str] = field(default_factory=list)
    over_limit: int = 0
    null_metric: Counter[str] = field(default_factory=Counter)
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return {
            "run_id": self.run_id,
            "dataset": str(self.dataset),
            "where": str(self.condition),
            "items_in_run": self.items_in_run,
            "matched": self.matched,
            "appended": [{"id": item_id, "value": value} for item_id, value in self.appended],
            "already_present": self.already_present,
            "over_limit": self.over_limit,
            "null_metric": sum(self.null_metric.values()),
            "null_reasons": dict(self.null_metric.most_common()),
            "dry_run": self.dry_run,
        }


def _numeric(result: ItemResult, condition: Condition, report: HardcasesReport) -> float | None:
    score = result.score(condition.metric)
    if score is None:
        report.null_metric[f"no {condition.metric} score"] += 1
        return None
    if score.value is None:
        report.null_metric[score.reason or "not measured"] += 1
        return None
    if isinstance(score.value, str):
        raise ScoregateError(
            f"--where {condition}: {condition.metric} is a {score.data_type} score ({score.value!r}), not a number",
            hint="choose items by a numeric or boolean score",
        )
    return float(score.value)


def hardcase_item(result: ItemResult, run_id: str, dataset: str, condition: Condition, value: float) -> DatasetItem:
    """Return the dataset item a stored result becomes, with its source recorded under metadata."""
    metadata = {k: v for k, v in result.metadata.items() if k not in ENGINE_METADATA}
    metadata.update(
        source_run=run_id,
        source_item_id=result.item_id,
        source_dataset=dataset,
        source_prompt=result.prompt,
        selected_by=str(condition),
        source_metric={"name": condition.metric, "value": value},
    )
    try:
        return DatasetItem(
            id=result.item_id, input=result.input, expected_output=result.expected_output, metadata=metadata
        )
    except ValidationError as exc:
        raise ValidationFailed(format_validation_error(f"run {run_id}: item {result.item_id!r}", exc)) from None


def _target_checker(path: Path) -> jsonschema.Draft202012Validator | None:
    meta_path = path.with_suffix(".yaml")
    if not meta_path.is_file():
        return None
    loaded = load_model(meta_path, _DATASET_META)
    meta = loaded[0]
    if meta is None:
        raise ValidationFailed(loaded[1], hint="fix the dataset's metadata file first")
    return jsonschema.Draft202012Validator(meta.input_schema) if meta.input_schema else None


def _problems(items: list[DatasetItem], checker: jsonschema.Draft202012Validator | None, path: Path) -> list[str]:
    problems = []
    for item in items:
        for err in checker.iter_errors(item.input) if checker else []:
            where = ".".join(str(p) for p in err.absolute_path)
            problems.append(f"item {item.id!r}: input{'.' + where if where else ''}: {err.message}")
    if problems:
        problems.append(f"(schema of {path.with_suffix('.yaml')})")
    return problems


def add_hardcases(
    root: Path,
    run_id: str,
    where: str,
    *,
    limit: int | None = None,
    dataset: str = DEFAULT_DATASET,
    dry_run: bool = False,
) -> HardcasesReport:
    """Append the run's items matching `where`, worst first, to datasets/<dataset>.jsonl; return what was done.

    Ids already in the dataset are skipped and reported; `limit` caps how many are appended. Every
    appended line is checked as a dataset item (and against the dataset's input schema) before any is
    written: a problem raises ValidationFailed and nothing is appended.
    """
    condition = parse_where(where)
    if (problem := name_problem(dataset)) is not None:
        raise ScoregateError(f"--dataset {problem}", hint="name a dataset (datasets/<name>.jsonl), not a path")
    if limit is not None and limit < 1:
        raise ScoregateError(f"--limit {limit}: give a positive number of items")
    store = RunStore.open(root / "runs", run_id)
    refuse_invalid(store, "take hard cases from")
    source_dataset = store.manifest_record.receipts.dataset_name()
    path = root / "datasets" / f"{dataset}.jsonl"
    if path.exists() and not path.is_file():
        raise ScoregateError(
            "is not a file, so no hard case can be appended to it", where=str(path), hint="make it a .jsonl file"
        )
    existing = {item.id for _line, item in iter_items(path)} if path.is_file() else set()
    report = HardcasesReport(run_id=run_id, dataset=path, condition=condition, dry_run=dry_run)
    chosen: list[tuple[float, ItemResult]] = []
    seen_metric = False
    for result in store.iter_results():
        report.items_in_run += 1
        seen_metric = seen_metric or result.score(condition.metric) is not None
        value = _numeric(result, condition, report)
        if value is not None and condition.holds(value):
            chosen.append((value, result))
    if report.items_in_run and not seen_metric:
        raise ScoregateError(
            f"--where {condition}: run {run_id} has no score {condition.metric!r}",
            hint="name a score the run measured (see `scoregate runs show RUN_ID`)",
        )
    report.matched = len(chosen)
    items: list[DatasetItem] = []
    for value, result in condition.worst_first(chosen):
        if result.item_id in existing:
            report.already_present.append(result.item_id)
        elif limit is not None and len(items) >= limit:
            report.over_limit += 1
        else:
            items.append(hardcase_item(result, run_id, source_dataset, condition, value))
            report.appended.append((result.item_id, value))
    problems = _problems(items, _target_checker(path), path)
    if problems:
        raise ValidationFailed(problems, hint=f"nothing was appended to {path}")
    if items and not dry_run:
        _append(path, items)
    return report


def _append(path: Path, items: list[DatasetItem]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for item in items:
        line = item.model_dump(mode="json")
        if line["expected_output"] is None:
            del line["expected_output"]
        lines.append(json.dumps(line, ensure_ascii=False))
    needs_newline = False
    if path.is_file() and path.stat().st_size > 0:
        with path.open("rb") as handle:
            handle.seek(-1, 2)
            needs_newline = handle.read(1) != b"\n"
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(("\n" if needs_newline else "") + "\n".join(lines) + "\n")
    except OSError as exc:
        raise ScoregateError(f"cannot append the hard cases: {exc.strerror}", where=str(path)) from None
