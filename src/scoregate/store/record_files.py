"""Read a run's manifest.json and summary.json as the typed run record (`store.record`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scoregate.store.record import Manifest, Record, RunSummary
from scoregate.store.run_store import RESTART_HINT, DamagedRun, read_run_json


def _read(path: Path, kind: type[Record], hint: str) -> Any:
    return _validate(read_run_json(path, hint=hint), kind, path, hint)


def _validate(data: dict[str, Any], kind: type[Record], path: Path, hint: str) -> Any:
    try:
        return kind.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise DamagedRun(f"damaged run file: `{where}`: {first['msg']}", where=str(path), hint=hint) from None


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
