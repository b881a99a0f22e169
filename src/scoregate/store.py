"""The local run store `runs/<run_id>/`: manifest, append-only results, summary — the system of record."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.records import ItemResult

MANIFEST = "manifest.json"
RESULTS = "results.jsonl"
SUMMARY = "summary.json"
LINKS = "links.json"


def new_run_id(experiment: str, now: datetime | None = None) -> str:
    """Return a sortable, unique run id like `smoke-20260101-120000-a1b2`."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{experiment}-{stamp}-{secrets.token_hex(2)}"


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    os.replace(tmp, path)


class RunStore:
    """One run's directory; results are appended one line per item and flushed at once."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.run_id = directory.name
        self._handle: Any = None

    @classmethod
    def create(cls, runs_dir: Path, run_id: str, manifest: dict[str, Any]) -> RunStore:
        """Create a new run directory with its manifest."""
        directory = runs_dir / run_id
        directory.mkdir(parents=True, exist_ok=False)
        store = cls(directory)
        _write_json(directory / MANIFEST, manifest)
        (directory / RESULTS).touch()
        return store

    @classmethod
    def open(cls, runs_dir: Path, run_id: str) -> RunStore:
        """Open an existing run; raise a clear error when there is none."""
        directory = runs_dir / run_id
        if not (directory / MANIFEST).is_file():
            raise ScoregateError(f"no run {run_id!r} in {runs_dir}", hint="list runs with `scoregate runs list`")
        return cls(directory)

    @property
    def manifest(self) -> dict[str, Any]:
        """The run's receipts and options."""
        return dict(json.loads((self.directory / MANIFEST).read_text(encoding="utf-8")))

    def update_manifest(self, **changes: Any) -> None:
        """Merge `changes` into the manifest (status, finish time...)."""
        _write_json(self.directory / MANIFEST, {**self.manifest, **changes})

    def repair(self) -> int:
        """Cut a partial last line left by a killed process; return the bytes removed."""
        path = self.directory / RESULTS
        data = path.read_bytes()
        if not data or data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        with path.open("r+b") as handle:
            handle.truncate(keep)
        return len(data) - keep

    def done_ids(self) -> set[str]:
        """Return the ids of items already stored (the resume point)."""
        return {r.item_id for r in self.iter_results()}

    def iter_results(self) -> Iterator[ItemResult]:
        """Yield stored results once per item id (first record wins), streaming from disk."""
        seen: set[str] = set()
        with (self.directory / RESULTS).open(encoding="utf-8") as handle:
            for line in handle:
                if not line.endswith("\n"):
                    break
                result = ItemResult.from_json_dict(json.loads(line))
                if result.repeat != 1:  # repeats 2..K of `run --repeat` (scoregate.engine.repeats reads them)
                    continue
                if result.item_id not in seen:
                    seen.add(result.item_id)
                    yield result

    def append(self, result: ItemResult) -> None:
        """Write one result line and hand it to the OS at once, so a killed run keeps it."""
        if self._handle is None:
            self._handle = (self.directory / RESULTS).open("a", encoding="utf-8")
        self._handle.write(json.dumps(result.to_json_dict(), ensure_ascii=False, default=str) + "\n")
        self._handle.flush()

    def close(self) -> None:
        """Close the results file."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def write_summary(self, summary: dict[str, Any]) -> None:
        """Write summary.json."""
        _write_json(self.directory / SUMMARY, summary)

    @property
    def summary(self) -> dict[str, Any] | None:
        """The run's summary, when it has one."""
        path = self.directory / SUMMARY
        return dict(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else None

    @property
    def links(self) -> dict[str, Any]:
        """Ids of the run's mirrors (MLflow run id, Langfuse experiment...)."""
        path = self.directory / LINKS
        return dict(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else {}

    def set_link(self, key: str, value: Any) -> None:
        """Record a mirror's id (mutable, unlike the manifest's receipts)."""
        _write_json(self.directory / LINKS, {**self.links, key: value})


def list_runs(runs_dir: Path) -> list[RunStore]:
    """Return every run in the store, newest first."""
    if not runs_dir.is_dir():
        return []
    stores = [RunStore(d) for d in runs_dir.iterdir() if (d / MANIFEST).is_file()]
    return sorted(stores, key=lambda s: s.manifest.get("started_at", ""), reverse=True)
