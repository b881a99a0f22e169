"""Read a run's manifest.json and summary.json as the typed run record (`store.record`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from scoregate.store.record import Manifest, RunSummary
from scoregate.store.record_base import Record
from scoregate.store.run_files import RESTART_HINT, SUMMARY, DamagedRun, read_run_json
from scoregate.store.summary_hint import made_again, summary_hint

R = TypeVar("R", bound=Record)


def _read(path: Path, kind: type[Record], hint: str) -> Any:
    return _validate(read_run_json(path, hint=hint), kind, path, hint)


def _validate(data: dict[str, Any], kind: type[Record], path: Path, hint: str) -> Any:
    try:
        return kind.model_validate(data)
    except ValidationError as exc:
        raise DamagedRun(f"damaged run file: {_first_problem(exc, data)}", where=str(path), hint=hint) from None


def _first_problem(exc: ValidationError, data: Any, at: tuple[str, ...] = ()) -> str:
    """The first field the file gets wrong, by its path in the file, and what was expected there.

    A field that may take several types (a number: int or float) fails once per type; pydantic names each type in
    the error's path (`scores.s.mean.int`). The path here stops where the file's own keys do, and the types are
    listed together: `scores.s.mean`: 'high' is not int or float.
    """
    errors = exc.errors()
    where = _in_file(errors[0]["loc"], data)
    same = [e for e in errors if _in_file(e["loc"], data) == where]
    tags = [str(e["loc"][len(where)]) for e in same if len(e["loc"]) > len(where)]
    field = ".".join(str(part) for part in (*at, *where))
    if len(tags) > 1:
        return f"`{field}`: {same[0]['input']!r} is not {' or '.join(tags)}"
    return f"`{field}`: {errors[0]['msg']}"


def _in_file(loc: tuple[int | str, ...], data: Any) -> tuple[int | str, ...]:
    """The longest start of `loc` that indexes `data` (the rest names a type a union tried, not a key)."""
    node, kept = data, 0
    for part in loc:
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if not (in_list or (isinstance(node, dict) and part in node)):
            break
        node, kept = node[part], kept + 1
    missing = kept == len(loc) - 1 and isinstance(node, dict)  # a required key the file lacks: name it
    return loc[: kept + 1] if missing else loc[:kept]


def read_section(summary: RunSummary, name: str, model: type[R], path: Path) -> R | None:
    """The block `name` of a summary read from `path`, through `model` (a track's own), or None when it has none;
    a block the model cannot read is a DamagedRun naming the file, the field and how to make the summary again."""
    block = summary.section(name)
    if block is None:
        return None
    try:
        return model.model_validate(block)
    except ValidationError as exc:
        problem = _first_problem(exc, block, at=(name,))
        raise DamagedRun(f"damaged run file: {problem}", where=str(path), hint=summary_hint(path.parent)) from None


def read_manifest(path: Path, *, hint: str = RESTART_HINT) -> Manifest:
    """Read a run's manifest.json as a `Manifest`; a damaged file names the field."""
    manifest: Manifest = _read(path, Manifest, hint)
    return manifest


def manifest_of(data: dict[str, Any], path: Path, *, hint: str = RESTART_HINT) -> Manifest:
    """The manifest already read from `path` as a `Manifest`; a damaged one names the field."""
    manifest: Manifest = _validate(data, Manifest, path, hint)
    return manifest


def read_summary(path: Path, *, hint: str = RESTART_HINT) -> RunSummary:
    """Read a run's summary.json as a `RunSummary`; a damaged file names the field."""
    summary: RunSummary = _read(path, RunSummary, hint)
    return summary


def run_summary(directory: Path) -> RunSummary | None:
    """The summary of the run in `directory`, when it has one; a damaged one says how to make it again."""
    path = directory / SUMMARY
    with made_again(directory):
        return read_summary(path) if path.exists() or path.is_symlink() else None
