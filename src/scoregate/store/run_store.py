"""The local run store `runs/<run_id>/`: manifest, append-only results, summary — the system of record.

The files' names, the run id and the JSON reads and writes are `store/run_files.py`; a results line is
`store/result_lines.py`. Their names are imported here too, where every caller has always found them.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.store.records import ItemResult
from scoregate.store.result_lines import json_line as json_line
from scoregate.store.result_lines import redact_result
from scoregate.store.run_files import LINKS as LINKS
from scoregate.store.run_files import MANIFEST as MANIFEST
from scoregate.store.run_files import QUARANTINE as QUARANTINE
from scoregate.store.run_files import RESTART_HINT as RESTART_HINT
from scoregate.store.run_files import RESULTS as RESULTS
from scoregate.store.run_files import RUN_ID as RUN_ID
from scoregate.store.run_files import SUMMARY as SUMMARY
from scoregate.store.run_files import DamagedResults as DamagedResults
from scoregate.store.run_files import DamagedRun as DamagedRun
from scoregate.store.run_files import StoreWriteError as StoreWriteError
from scoregate.store.run_files import new_run_id as new_run_id
from scoregate.store.run_files import read_run_json as read_run_json
from scoregate.store.run_files import run_directory as run_directory
from scoregate.store.run_files import write_run_json

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, RunSummary
    from scoregate.store.results_index import ResultsIndex


class RunStore:
    """One run's directory; results are appended one line per item and flushed at once."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.run_id = directory.name
        self._handle: Any = None

    @classmethod
    def create(cls, runs_dir: Path, run_id: str, manifest: dict[str, Any]) -> RunStore:
        """Create a new run directory with its manifest."""
        directory = run_directory(runs_dir, run_id)
        try:
            directory.mkdir(parents=True, exist_ok=False)
        except OSError as exc:
            raise StoreWriteError(Path(exc.filename or directory), exc) from None
        store = cls(directory)
        from scoregate.store.record import SCHEMA_VERSION, Manifest  # pydantic: loaded once a run is made

        manifest = {"schema_version": SCHEMA_VERSION, "run_id": run_id, **manifest}
        Manifest.model_validate(manifest)  # a manifest the record cannot read is never written
        write_run_json(directory / MANIFEST, manifest)
        try:
            (directory / RESULTS).touch()
        except OSError as exc:
            raise StoreWriteError(directory / RESULTS, exc, run_id) from None
        return store

    @classmethod
    def open(cls, runs_dir: Path, run_id: str) -> RunStore:
        """Open an existing run; raise a clear error, with the closest stored ids, when there is none."""
        from scoregate.store.run_lookup import stored_run_directory

        return cls(stored_run_directory(runs_dir, run_id))

    @property
    def manifest(self) -> dict[str, Any]:
        """The run's receipts and options."""
        path = self.directory / MANIFEST
        data = read_run_json(path)
        if not isinstance(data.get("receipts"), dict):
            raise DamagedRun(
                "damaged run file: no `receipts` object (it was overwritten)", where=str(path), hint=RESTART_HINT
            )
        return data

    @property
    def manifest_record(self) -> Manifest:
        """The run's manifest as the typed record; a damaged file names the field."""
        from scoregate.store.record_files import manifest_of

        return manifest_of(self.manifest, self.directory / MANIFEST)  # no `receipts` is named as before

    def update_manifest(self, **changes: Any) -> None:
        """Merge `changes` into the manifest (status, finish time...)."""
        write_run_json(self.directory / MANIFEST, {**self.manifest, **changes})

    def needs_repair(self) -> bool:
        """True when results.jsonl ends in a partial line (a process was killed while writing)."""
        path = self.directory / RESULTS
        with path.open("rb") as handle:
            if handle.seek(0, os.SEEK_END) == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"

    def quarantine(self) -> int:
        """Move every damaged line of results.jsonl to results.quarantined.jsonl; return how many moved."""
        path = self.directory / RESULTS
        keep: list[bytes] = []
        bad: list[bytes] = []
        with path.open("rb") as handle:
            for raw in handle:
                if not raw.endswith(b"\n"):
                    keep.append(raw)  # a partial last line is cut by `repair`
                    continue
                try:
                    record = json.loads(raw.decode("utf-8"))
                    ItemResult.from_json_dict(record)
                    if not isinstance(record.get("item_id"), str):
                        raise ValueError("no item_id")
                except (ValueError, TypeError, AttributeError):
                    bad.append(raw)
                else:
                    keep.append(raw)
        if bad:
            with (self.directory / QUARANTINE).open("ab") as out:
                out.writelines(bad)
            tmp = path.with_suffix(".jsonl.tmp")
            tmp.write_bytes(b"".join(keep))
            os.replace(tmp, path)
        return len(bad)

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

    def done_ids(self, *, retry_errors: bool = False) -> set[str]:
        """Return the ids of items already stored (the resume point); with `retry_errors`, only those that succeeded
        and whose every call (task, stage, judge) succeeded."""
        results = self.directory / RESULTS
        if results.is_file() and results.stat().st_size == 0:  # a new run: nothing to index (no numpy before its items)
            return set()
        return {r.item_id for r in self._newest(repeats=False) if not (retry_errors and r.needs_retry)}

    def _index(self, *, repeats: bool) -> ResultsIndex:
        """Where the newest record of each item (or item and repeat) sits in results.jsonl (one cheap pass)."""
        from scoregate.store.results_index import DamagedLine, index_results  # numpy: not before a run's first item

        path = self.directory / RESULTS
        try:
            return index_results(path, repeats=repeats)
        except DamagedLine as exc:
            raise DamagedResults(path, exc.line, exc.detail) from None
        except OSError as exc:
            raise DamagedRun(
                f"cannot read the run's results ({exc.strerror})",
                where=str(path),
                hint="restore results.jsonl from a copy; without it the run's items are gone, so start a new run",
            ) from None

    def _read(self, index: ResultsIndex, order: Iterable[int] | None) -> Iterator[ItemResult]:
        """Yield the indexed records (all, in file order, or those at `order`), parsed one at a time."""
        from scoregate.store.results_index import DamagedLine, read_records

        path = self.directory / RESULTS
        try:
            for number, raw in read_records(path, index, order):
                try:
                    yield ItemResult.from_json_dict(raw)
                except TypeError as exc:
                    raise DamagedResults(path, number, str(exc)) from None
        except DamagedLine as exc:
            raise DamagedResults(path, exc.line, exc.detail) from None

    def _newest(self, *, repeats: bool) -> Iterator[ItemResult]:
        yield from self._read(self._index(repeats=repeats), None)

    def ordered_results(self) -> OrderedResults:
        """The newest record of each item in dataset order (by item index), to read in full or by position."""
        return OrderedResults(self, self._index(repeats=False))

    def iter_results(self) -> Iterator[ItemResult]:
        """Yield the newest stored record of each item id in dataset order (by item index), streaming from disk.

        Dataset order, not the order items finished in: every statistic over a run (bootstrap CIs resample
        by position) is then the same for the same results, however the concurrent items interleaved.
        Older records of an item (a failure later retried with `--retry-errors`) stay in the file as history.
        Memory holds three integers per item (`scoregate.store.results_index`), never the records.
        """
        yield from self.ordered_results()

    def iter_all_records(self) -> Iterator[ItemResult]:
        """Yield the newest stored record of each (item id, repeat), in file order, streaming from disk.

        Unlike `iter_results` (repeat 1 only), this includes repeats 2..K of `run --repeat K`.
        """
        if not (self.directory / RESULTS).is_file():
            return
        yield from self._newest(repeats=True)

    def append(self, result: ItemResult) -> None:
        """Write one result line and hand it to the OS at once, so a killed run keeps it."""
        redact_result(result)
        line = json_line(result)
        try:
            if self._handle is None:
                self._handle = (self.directory / RESULTS).open("a", encoding="utf-8")
            self._handle.write(line)
            self._handle.flush()
        except OSError as exc:
            raise StoreWriteError(self.directory / RESULTS, exc, self.run_id) from None

    def close(self) -> None:
        """Close the results file."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            with contextlib.suppress(OSError):  # the write that failed was reported already
                handle.close()

    def write_summary(self, summary: dict[str, Any]) -> None:
        """Write summary.json through `RunSummary`, at the manifest's schema version (an old run stays version 1)."""
        from scoregate.store.record import RunSummary

        version = self.manifest.get("schema_version")
        data = {"schema_version": version, **summary} if version is not None else summary
        RunSummary.model_validate(data)  # a summary the record cannot read is never written (key order kept)
        write_run_json(self.directory / SUMMARY, data)

    @property
    def summary(self) -> dict[str, Any] | None:
        """The run's summary, when it has one."""
        from scoregate.store.summary_hint import made_again

        path = self.directory / SUMMARY
        with made_again(self.directory):
            return read_run_json(path) if os.path.lexists(path) else None

    @property
    def summary_record(self) -> RunSummary | None:
        """The run's summary as the typed record, when it has one; a damaged file names the field."""
        from scoregate.store.record_files import run_summary

        return run_summary(self.directory)

    @property
    def links(self) -> dict[str, Any]:
        """Ids of the run's mirrors (MLflow run id, Langfuse experiment...)."""
        path = self.directory / LINKS
        hint = f"delete {LINKS}: `scoregate mlflow-sync {self.run_id}` finds the MLflow run again by its run id"
        return read_run_json(path, hint=hint) if os.path.lexists(path) else {}

    def set_link(self, key: str, value: Any) -> None:
        """Record a mirror's id (mutable, unlike the manifest's receipts)."""
        write_run_json(self.directory / LINKS, {**self.links, key: value})


class OrderedResults:
    """A run's newest record of each item in dataset order, read from disk on demand (three integers an item held)."""

    def __init__(self, store: RunStore, index: ResultsIndex) -> None:
        self._store, self._index = store, index
        self._order = index.dataset_order()

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[ItemResult]:
        return self._store._read(self._index, self._order)

    def at(self, positions: Sequence[int]) -> Iterator[ItemResult]:
        """Yield the items at `positions` (0 = the first in dataset order), in the order given."""
        return self._store._read(self._index, [int(self._order[p]) for p in positions])


def list_runs(runs_dir: Path) -> list[RunStore]:
    """Return every run in the store, newest first."""
    if not runs_dir.is_dir():
        return []
    stores = [RunStore(d) for d in runs_dir.iterdir() if (d / MANIFEST).is_file()]
    return sorted(stores, key=_started_at, reverse=True)


def _started_at(store: RunStore) -> str:
    """The run's start time for sorting; a damaged manifest sorts by the directory's time instead."""
    try:
        return str(store.manifest.get("started_at", ""))
    except DamagedRun:
        return datetime.fromtimestamp(store.directory.stat().st_mtime, UTC).isoformat()
