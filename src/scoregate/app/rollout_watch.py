"""`scoregate rollout watch PROMPT`: poll the live scores of both versions, decide after each poll, act with --auto.

The scores come from a `LiveScores` source: anything that returns the traces of the two versions seen since a
cursor. `ScoreFile` reads them from a JSON-lines file (one trace a line: time, version, session, score, error,
latency, cost; what an export writes); `rollout_live.LangfuseLiveScores` reads the calls linked to each prompt
version on Langfuse and the scores on their traces (the default of `rollout watch`). After each poll the record
(monitor state and cursor together) is replaced whole, so a killed watch resumes at its last recorded poll. A
decision is appended to promotions.jsonl with its figures; with `auto` it is carried out: promote moves
`production` to the candidate through `promote` (its evidence checked again) and then `canary` with it, roll back
and halt move `canary` back to production's version. Without `auto` the watch stops at the decision and says the
command that carries it out.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from scoregate.analysis.rollout_monitor import PollData, RolloutMonitor, RolloutReading
from scoregate.analysis.rollout_streams import CallFacts
from scoregate.analysis.sequential import SequentialInputError
from scoregate.app.rollout_record import CANARY, PRODUCTION, RolloutRecord, live_record, record_lock, write_record
from scoregate.errors import ScoregateError

__all__ = ["LiveScores", "LiveTrace", "ScoreFile", "WatchOutcome", "watch_rollout"]


@dataclass(frozen=True)
class LiveTrace:
    """One production trace of either version: when, which version, whose session, its score and telemetry."""

    at: float
    version: int
    session: str | None
    score: float | None
    error: bool = False
    latency_ms: float | None = None
    cost_usd: float | None = None


class LiveScores(Protocol):
    """Where a watch reads the two versions' traces from."""

    def poll(self, prompt: str, versions: tuple[int, int], cursor: str | None) -> tuple[list[LiveTrace], str | None]:
        """Return the traces of `versions` seen since `cursor`, and the cursor after them."""
        ...


def _time(value: Any, where: str) -> float:
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        raise ScoregateError(f"time {value!r} is neither seconds nor an ISO date", where=where) from None


def _number(row: dict[str, Any], field: str) -> float | None:
    value = row.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{field} must be a number or null, not {value!r}")
    return float(value)


def _trace(row: Any, prompt: str, where: str) -> tuple[int, LiveTrace | None]:
    """Return (version, trace) of one line's object; the trace is None for another prompt's line."""
    if not isinstance(row, dict):
        raise ValueError("a trace line is one JSON object")
    version = row.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValueError(f"version must be the prompt's Langfuse version number, not {version!r}")
    if row.get("prompt", prompt) != prompt:
        return version, None
    session = row.get("session")
    at = _time(row.get("time"), where)
    trace = LiveTrace(
        at, version, None if session is None else str(session), _number(row, "score"), bool(row.get("error")),
        _number(row, "latency_ms"), _number(row, "cost_usd"),
    )  # fmt: skip
    return version, trace


@dataclass(frozen=True)
class ScoreFile:
    """Live scores from a JSON-lines file that grows; the cursor is `BYTES:LINES` read up to."""

    path: Path

    def poll(self, prompt: str, versions: tuple[int, int], cursor: str | None) -> tuple[list[LiveTrace], str | None]:
        """Return the whole new lines' traces of `versions` (a line still being written waits for the next poll)."""
        offset, _, done = (cursor or "0:0").partition(":")
        if not (offset.isdigit() and (done or "0").isdigit()):
            raise ScoregateError(
                f"the rollout's cursor was not written by a scores file: {(cursor or '')[:60]!r}",
                hint="this rollout was watched on Langfuse: keep watching it without --scores",
            )
        start, lines_before = int(offset), int(done or 0)
        try:
            with self.path.open("rb") as handle:
                handle.seek(start)
                data = handle.read()
        except OSError as exc:
            raise ScoregateError(f"cannot read the live scores ({exc.strerror})", where=str(self.path)) from None
        whole = data[: data.rfind(b"\n") + 1]
        rows = whole.split(b"\n")[:-1]
        traces = []
        for number, line in enumerate(rows, start=lines_before + 1):
            where = f"{self.path}: line {number}"
            try:
                raw = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ScoregateError(
                    f"not UTF-8 (byte 0x{line[exc.start : exc.start + 1].hex()} at column {exc.start + 1})",
                    where=where, hint="save the file as UTF-8",
                ) from None  # fmt: skip
            if not raw.strip():
                continue
            try:
                version, trace = _trace(json.loads(raw), prompt, where)
            except ValueError as exc:
                raise ScoregateError(
                    f"not a trace line: {exc}", where=where,
                    hint="one JSON object a line: time, version, session, score, error, latency_ms, cost_usd",
                ) from None  # fmt: skip
            if trace is not None and version in versions:
                traces.append(trace)
        return traces, f"{start + len(whole)}:{lines_before + len(rows)}"


@dataclass
class WatchOutcome:
    """What a watch did: its readings this time, the decision it stopped at and what was done about it."""

    record: RolloutRecord
    readings: list[RolloutReading]
    acted: list[str]
    command: str | None
    """The command that carries out a decision the watch did not act on."""
    warnings: list[str] = field(default_factory=list)


def _poll_data(record: RolloutRecord, traces: list[LiveTrace]) -> PollData:
    seen = set(record.sessions)
    scored, assigned, calls = [], [], []
    for t in sorted(traces, key=lambda t: t.at):
        canary = t.version == record.candidate
        if t.score is not None:
            scored.append((t.at, canary, t.score))
        key = None if t.session is None else hashlib.sha256(t.session.encode()).hexdigest()[:20]
        if key is not None and key not in seen:  # a user's id is personal data: only its digest is kept
            seen.add(key)
            record.sessions.append(key)
            assigned.append(canary)
        if canary:
            calls.append(CallFacts(t.error, t.latency_ms, t.cost_usd))
    return PollData(scored, assigned, calls)


def _audit(root: Path, record: RolloutRecord, reading: RolloutReading, acted: list[str], version: int) -> list[str]:
    """Append the decision to promotions.jsonl and tag the canary's evidence runs in MLflow; return warnings."""
    from scoregate.app.promotion_log import append_record, promotion_history
    from scoregate.support.redaction import redact

    started = [r for r in promotion_history(root, record.prompt) if r.get("label") == CANARY
               and r.get("action") == "promote" and r.get("version") == record.candidate]  # fmt: skip
    runs = [str(r) for r in (started[-1].get("evidence_runs") or [])] if started else []
    append_record(root, {
        "action": f"rollout {reading.decision}", "prompt": record.prompt, "label": CANARY, "version": version,
        "previous_version": record.candidate, "candidate": record.candidate, "production": record.production,
        "share": record.share, "metric": record.metric, "reason": redact(reading.reason), "figures": reading.to_dict(),
        "acted": acted, "evidence_runs": runs, "time": datetime.now(UTC).isoformat(),
    })  # fmt: skip
    difference = "none" if reading.lower is None else f"[{reading.lower:.4g}, {reading.upper:.4g}]"
    tag = (
        f"rollout {reading.decision} v{record.candidate} over v{record.production} at poll {reading.poll}: "
        f"difference {difference} over {reading.units} units"
    )
    try:
        from scoregate.sinks.mlflow.client import project_client

        client = project_client(root)
        for run_id in runs:
            client.set_tag(run_id, "scoregate.rollout", tag)
    except Exception as exc:  # the labels moved and promotions.jsonl has the record; the tags can be redone
        return [f"MLflow evidence runs not tagged with the decision: {exc}"]
    return []


def _act(root: Path, record: RolloutRecord, decision: str) -> tuple[list[str], int]:
    """Carry out the decision on the server; return what was done and the version `canary` ends on."""
    from scoregate.app.promotion import promote

    if decision == "promote":
        moved = promote(root, record.prompt, version=record.candidate, label=PRODUCTION)
        done = [f"`production` moved to v{record.candidate}" + (" (it was there already)" if moved.unchanged else "")]
        return [*done, f"`canary` stays on v{record.candidate}, beside `production`"], record.candidate
    _move_canary(record.prompt, record.production)
    return [f"`canary` moved back to v{record.production}, production's version"], record.production


def _move_canary(prompt: str, version: int) -> None:
    from scoregate.integrations.langfuse.client import require_settings
    from scoregate.integrations.langfuse.remote import Remote, path_part

    remote = Remote(require_settings())
    doing = f"moving label 'canary' to {prompt} v{version}"
    remote.call(doing, remote.api.prompt_version.update, path_part(prompt), version, new_labels=[CANARY])


_ENDED = {"promote": "promoted", "rollback": "rolled_back", "halt": "halted"}


def watch_rollout(
    root: Path,
    prompt: str,
    source: LiveScores,
    *,
    auto: bool = False,
    polls: int | None = None,
    every_s: float = 60.0,
    on_reading: Callable[[RolloutReading], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> WatchOutcome:
    """Poll until a decision (or `polls` polls), recording each; with `auto` carry the decision out."""
    lock = record_lock(root, prompt)
    try:
        lock.acquire()
    except ScoregateError:
        raise ScoregateError(
            f"another `scoregate rollout watch {prompt}` is live", hint="one watch per rollout: stop the other first"
        ) from None
    try:
        return _watch(root, prompt, source, auto, polls, every_s, on_reading, sleep)
    finally:
        lock.release()


def _watch(
    root: Path, prompt: str, source: LiveScores, auto: bool, polls: int | None, every_s: float,
    on_reading: Callable[[RolloutReading], None] | None, sleep: Callable[[float], None],
) -> WatchOutcome:  # fmt: skip
    record = live_record(root, prompt)
    monitor = RolloutMonitor.from_dict(record.monitor)
    readings: list[RolloutReading] = []
    while polls is None or len(readings) < polls:
        if readings:
            sleep(every_s)
        traces, cursor = source.poll(prompt, (record.candidate, record.production), record.cursor)
        try:
            reading = monitor.poll(_poll_data(record, traces))
        except SequentialInputError as exc:
            raise ScoregateError(
                f"a live score lies outside the rollout's range: {exc.message}",
                where=f"rollout of {prompt}",
                hint="the deciding scores must lie in the --range the rollout started with; correct the scores "
                "(nothing of this poll was recorded) and watch again",
            ) from None
        record.monitor, record.cursor = monitor.to_dict(), cursor
        record.readings.append({"at": datetime.now(UTC).isoformat(), **reading.to_dict()})
        write_record(root, record)
        readings.append(reading)
        if on_reading is not None:
            on_reading(reading)
        if reading.decision != "continue":
            break
    last = readings[-1] if readings else None
    if last is None or last.decision == "continue":
        return WatchOutcome(record, readings, [], None)
    if not auto:
        return WatchOutcome(record, readings, [], f"scoregate rollout watch {prompt} --auto")
    acted, version = _act(root, record, last.decision)
    warnings = _audit(root, record, last, acted, version)
    record.state = _ENDED[last.decision]  # type: ignore[assignment]
    record.decided = {"decision": last.decision, "reason": last.reason, "acted": acted, "poll": last.poll}
    write_record(root, record)
    return WatchOutcome(record, readings, acted, None, warnings)
