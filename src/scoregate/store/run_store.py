"""The local run store `runs/<run_id>/`: manifest, append-only results, summary — the system of record."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.errors import ScoregateError
from scoregate.store.records import ItemResult
from scoregate.support.json_errors import json_position, json_problem
from scoregate.support.redaction import redact, redact_optional
from scoregate.support.storable import number_note, storable, surrogate_note

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, RunSummary
    from scoregate.store.results_index import ResultsIndex

MANIFEST = "manifest.json"
RESULTS = "results.jsonl"
SUMMARY = "summary.json"
LINKS = "links.json"
QUARANTINE = "results.quarantined.jsonl"


RUN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,254}")
"""A run id: one file name (an experiment name, a time, 4 hex digits), never a path."""


def run_directory(runs_dir: Path, run_id: str) -> Path:
    """Return `runs_dir/run_id`; raise ScoregateError when `run_id` is not a run id (`..`, a `/`, too long...)."""
    if not RUN_ID.fullmatch(run_id):
        shown = run_id if len(run_id) <= 80 else run_id[:80] + "…"
        raise ScoregateError(
            f"not a run id: {shown!r}",
            hint="a run id is one name of letters, digits, '_', '-' and '.' (e.g. smoke-20260101-120000-a1b2), "
            "never a path; list runs with `scoregate runs list`",
        )
    return runs_dir / run_id


def new_run_id(experiment: str, now: datetime | None = None) -> str:
    """Return a sortable, unique run id like `smoke-20260101-120000-a1b2`."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{experiment}-{stamp}-{secrets.token_hex(2)}"


class StoreWriteError(ScoregateError):
    """The run store could not be written (read-only, full disk...); what was stored before is intact."""

    def __init__(self, path: Path, error: OSError, run_id: str | None = None) -> None:
        reason = error.strerror or str(error)
        fix = "free disk space or make it writable"
        then = f", then resume with `scoregate run --resume {run_id}`" if run_id else ", then run again"
        super().__init__(f"cannot write {path}: {reason}", hint=f"nothing stored before is lost; {fix}{then}")


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise StoreWriteError(path, exc, path.parent.name) from None


class DamagedRun(ScoregateError):
    """A run file (manifest.json, summary.json...) that is not valid JSON: truncated or overwritten."""


RESTART_HINT = "the run cannot be resumed from it; its results.jsonl is kept. Start a new run"


def read_run_json(path: Path, *, hint: str = RESTART_HINT) -> dict[str, Any]:
    """Read a run's JSON file; raise DamagedRun naming the file, line and column when it is not valid."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise DamagedRun(f"damaged run file: cannot read it ({exc.strerror})", where=str(path), hint=hint) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DamagedRun(
            f"damaged run file (truncated or overwritten): {json_problem(exc, unit='file', located=False)}",
            where="{}:{}:{}".format(path, *json_position(exc)),
            hint=hint,
        ) from None
    if not isinstance(data, dict):
        raise DamagedRun("damaged run file: not a JSON object", where=str(path), hint=hint)
    return data


class DamagedResults(ScoregateError):
    """A line of results.jsonl that is not a result record (not a partial last line, which is repaired)."""

    def __init__(self, path: Path, line: int, detail: str) -> None:
        self.path, self.line = path, line
        super().__init__(
            f"damaged result record ({detail})",
            where=f"{path}:{line}",
            hint=f"resume with `scoregate run --resume {path.parent.name} --quarantine`: damaged lines move to "
            f"{QUARANTINE} (kept) and their items run again",
        )


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
        _write_json(directory / MANIFEST, manifest)
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
        _write_json(self.directory / MANIFEST, {**self.manifest, **changes})

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
        _redact_result(result)
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
        _write_json(self.directory / SUMMARY, data)

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
        _write_json(self.directory / LINKS, {**self.links, key: value})


def json_line(result: ItemResult) -> str:
    """One results.jsonl line: strict JSON in UTF-8. A lone UTF-16 surrogate (legal in JSON, not Unicode) becomes
    U+FFFD and an infinite or NaN number null (`scoregate.support.storable`); the record's `notes` say so."""
    row = result.to_json_dict()
    try:
        line = json.dumps(row, ensure_ascii=False, allow_nan=False, default=str)
        line.encode("utf-8")
    except ValueError:  # UnicodeEncodeError is one
        counts: dict[str, int] = {}
        row = storable(row, counts)
        if counts.get("surrogates"):
            result.notes.append(surrogate_note(counts["surrogates"]))
        if counts.get("numbers"):
            result.notes.append(number_note(counts["numbers"]))
        row["notes"] = list(result.notes)
        line = json.dumps(row, ensure_ascii=False, allow_nan=False, default=str)
    return line + "\n"


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


def _redact_result(result: ItemResult) -> None:
    """Mask known secrets in every error text of a result (an endpoint may echo the key back)."""
    result.error = redact_optional(result.error)
    if result.error is not None and result.raw_output is not None:
        result.raw_output = redact(result.raw_output)
    for call in result.calls:
        call.error = redact_optional(call.error)
    for score in result.scores:
        score.reason = redact_optional(score.reason)
        score.comment = redact_optional(score.comment)


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
