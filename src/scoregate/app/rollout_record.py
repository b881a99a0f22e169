"""A rollout's local record: `.scoregate/rollouts/<prompt>.json`, written whole after every poll, and its lock.

The labels on the server say which versions serve; this record says the rest: the versions and share it
started with, the rule, the monitor's state (`analysis.rollout_monitor`), the live source's cursor, each
poll's reading and the decision. The monitor state and the cursor are written in one atomic replace, so a
watch killed at any point resumes at the last poll it recorded and reads no trace twice. A watch holds the
record's lock (`store.lock.RunLock`, an OS lock the OS drops when the process dies): a second live watch of
the same prompt is refused, a killed one's is taken over.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from scoregate.analysis.rollout_monitor import RolloutMonitor, RolloutReading
from scoregate.errors import ScoregateError
from scoregate.store.lock import RunLock
from scoregate.support.files import replace_atomically

__all__ = [
    "CANARY",
    "PRODUCTION",
    "ROLLOUTS",
    "RolloutRecord",
    "live_record",
    "read_record",
    "record_lock",
    "record_path",
    "records",
]

ROLLOUTS = Path(".scoregate") / "rollouts"
CANARY = "canary"
PRODUCTION = "production"
State = Literal["live", "promoted", "rolled_back", "halted"]


@dataclass
class RolloutRecord:
    """One rollout as its record file holds it."""

    prompt: str
    candidate: int
    production: int
    share: float
    metric: str
    started_at: str
    state: State = "live"
    monitor: dict[str, Any] = field(default_factory=dict)
    cursor: str | None = None
    sessions: list[str] = field(default_factory=list)
    """Digests (SHA-256, 20 hex digits) of the users or sessions seen so far: the split check counts each once."""
    readings: list[dict[str, Any]] = field(default_factory=list)
    """Each poll's reading, oldest first."""
    decided: dict[str, Any] | None = None
    """The decision that ended the rollout, its figures and what was done."""

    def to_dict(self) -> dict[str, Any]:
        """Return the record as plain data (JSON-ready)."""
        return asdict(self)


def record_path(root: Path, prompt: str) -> Path:
    """Return the record file of `prompt`'s rollout (a prompt in a Langfuse folder, `team/digest`, in a subfolder)."""
    parts = prompt.split("/")
    if not prompt or prompt.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise ScoregateError(
            f"{prompt!r} is not a prompt name", hint="name the prompt as Langfuse does, e.g. digest or team/digest"
        )
    return root / ROLLOUTS / f"{prompt}.json"


def read_record(root: Path, prompt: str) -> RolloutRecord | None:
    """Return the prompt's rollout record, None when there is none; a damaged file is an error naming its field."""
    path = record_path(root, prompt)
    if not path.is_file():
        return None
    try:
        record = _RECORD.validate_json(path.read_bytes(), strict=True)
        problem = _damaged_part(record)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field_name = ".".join(str(part) for part in first["loc"])
        problem = f"field {field_name}: {first['msg']}" if field_name else first["msg"]
    except OSError as exc:
        problem = f"cannot read it: {exc.strerror}"
    if problem is None:
        return record
    raise ScoregateError(
        f"the rollout record is damaged ({problem})", where=str(path), hint="restore it from a backup or remove it"
    )


_RECORD: TypeAdapter[RolloutRecord] = TypeAdapter(RolloutRecord)
_READING: TypeAdapter[RolloutReading] = TypeAdapter(RolloutReading)


def _damaged_part(record: RolloutRecord) -> str | None:
    """Return what is wrong inside a record of the right shape (its time, monitor state, readings), or None."""
    try:
        datetime.fromisoformat(record.started_at)
    except ValueError:
        return f"field started_at: {record.started_at[:40]!r} is not an ISO date"
    try:
        RolloutMonitor.from_dict(record.monitor)
    except (KeyError, TypeError, ValueError, AttributeError):
        return "field monitor: not the monitor state a watch writes"
    for number, reading in enumerate(record.readings):
        try:
            _READING.validate_python(reading)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in ("readings", number, *first["loc"]))
            return f"field {where}: {first['msg']}"
    return None


def live_record(root: Path, prompt: str) -> RolloutRecord:
    """Return the prompt's live rollout record, or say there is none."""
    record = read_record(root, prompt)
    if record is None:
        raise ScoregateError(
            f"no rollout of prompt {prompt!r} in {root / ROLLOUTS}",
            hint=f"start one with `scoregate rollout start {prompt} --version N --share 10% --metric SCORE`",
        )
    if record.state != "live":
        raise ScoregateError(f"the rollout of {prompt!r} has ended: {record.state.replace('_', ' ')}")
    return record


def write_record(root: Path, record: RolloutRecord) -> None:
    """Replace the record file whole (a reader or a resumed watch never sees half of it)."""
    path = record_path(root, record.prompt)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replace_atomically(path) as out:
        out.write(json.dumps(record.to_dict(), indent=1, ensure_ascii=False) + "\n")


def records(root: Path) -> list[RolloutRecord]:
    """Return every rollout record of the project, by prompt name."""
    folder = root / ROLLOUTS
    if not folder.is_dir():
        return []
    names = sorted(path.relative_to(folder).with_suffix("").as_posix() for path in folder.rglob("*.json"))
    found = [read_record(root, name) for name in names]
    return [r for r in found if r is not None]


def record_lock(root: Path, prompt: str) -> RunLock:
    """Return the lock a watch of `prompt` holds while it runs (the OS releases it if the watch is killed)."""
    folder = root / ROLLOUTS / f"{prompt}.watch"
    folder.mkdir(parents=True, exist_ok=True)
    return RunLock(folder, hint="one watch per rollout: stop the other one first (it resumes where it stopped)")
