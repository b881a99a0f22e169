"""A rollout's live calls read from Langfuse: the generations linked to two versions of a prompt, and their scores.

Each poll lists, through the SDK's API client, the generations (GET /api/public/v2/observations,
`api.observations.get_many`) linked to each version (`promptName`, `promptVersion`) that started since the
cursor, and reads the deciding metric's score on each one's trace (GET /api/public/v3/scores,
`api.scores.get_many` by `traceId` and `name`: the read the recorded v4.16 server answers; a score posted a moment
ago may take a few seconds to be listed). A call comes back once, with its session (as a digest), error (level
ERROR), latency (end − start) and cost (the usage group's total cost).

A call without the score waits in the cursor and comes back at the poll that finds it; a failed call comes back
at once (a failed call may never be scored, and the error-rate guardrail needs it), and so does a call still
unscored after `wait_s` (without a score: it counts in the split and the guardrails, not in the metric). The
cursor is JSON: the newest start time read (`since`), the trace ids seen from `lookback_s` before it (a
generation exported late, after a newer one, is still read once), and the waiting calls.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.remote import Remote

__all__ = ["LiveCall", "read_live_calls"]

PAGE_SIZE = 100
FIELDS = "core,basic,usage,prompt"
LOOKBACK_S = 300.0
"""How far before the newest start read the next poll lists again (export of a long call lands late)."""
WAIT_S = 86400.0
"""How long a call waits for its score before it counts without one."""


@dataclass(frozen=True)
class LiveCall:
    """One call of either version: its trace, when it started, its version, session digest, score and telemetry."""

    trace_id: str
    at: float
    version: int
    session: str | None
    """SHA-256 of the session id, 20 hex digits: a user's id is personal data, the cursor keeps only this."""
    score: float | None
    error: bool
    latency_ms: float | None
    cost_usd: float | None


def _when(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def _digest(session: Any) -> str | None:
    return None if not session else hashlib.sha256(str(session).encode()).hexdigest()[:20]


def _generations(
    remote: Remote, prompt: str, version: int, since: dt.datetime, environment: str | None
) -> Iterator[Any]:
    conditions = [
        {"type": "string", "column": "type", "operator": "=", "value": "GENERATION"},
        {"type": "string", "column": "promptName", "operator": "=", "value": prompt},
        {"type": "number", "column": "promptVersion", "operator": "=", "value": version},
        {"type": "datetime", "column": "startTime", "operator": ">=", "value": _iso(since)},
    ]
    if environment is not None:
        conditions.append({"type": "string", "column": "environment", "operator": "=", "value": environment})
    cursor = None
    while True:
        page = remote.call(
            f"listing the generations of {prompt} v{version}",
            remote.api.observations.get_many,
            filter=json.dumps(conditions),
            fields=FIELDS,
            limit=PAGE_SIZE,
            cursor=cursor,
        )
        yield from page.data
        cursor = getattr(page.meta, "cursor", None)
        if not cursor or not page.data:
            return


def _call(row: Any) -> LiveCall:
    start = _when(row.start_time)
    end = _when(row.end_time) if row.end_time is not None else None
    level = getattr(row.level, "value", row.level)
    return LiveCall(
        trace_id=str(row.trace_id),
        at=start.timestamp(),
        version=int(row.prompt_version),
        session=_digest(row.session_id),
        score=None,
        error=str(level).upper() == "ERROR",
        latency_ms=None if end is None else max(0.0, (end - start).total_seconds() * 1000),
        cost_usd=None if row.total_cost is None else float(row.total_cost),
    )


def _score(remote: Remote, trace_id: str, metric: str) -> float | None:
    """The newest score named `metric` on the trace, as a number; None when it has none yet."""
    page = remote.call(
        f"reading the score {metric!r} of trace {trace_id}",
        remote.api.scores.get_many,
        trace_id=trace_id,
        name=metric,
        limit=100,
    )
    named = [score for score in page.data if score.name == metric]  # a server may not filter by name: check here
    if not named:
        return None
    newest = max(named, key=lambda s: _when(s.timestamp))
    if isinstance(newest.value, bool) or newest.data_type == "BOOLEAN":
        return float(bool(newest.value))
    if newest.data_type != "NUMERIC" or not isinstance(newest.value, int | float):
        raise ScoregateError(
            f"the score {metric!r} on trace {trace_id} is {newest.data_type}, not a number",
            hint="a rollout decides on a numeric or boolean score: start it with such a --metric",
        )
    return float(newest.value)


def _cursor(text: str | None) -> tuple[dt.datetime | None, dict[str, float], dict[str, LiveCall]]:
    if not text:
        return None, {}, {}
    try:
        data = json.loads(text)
        since = _when(data["since"]) if data.get("since") else None
        waiting = {k: LiveCall(**v) for k, v in data.get("waiting", {}).items()}
        return since, {str(k): float(v) for k, v in data.get("seen", {}).items()}, waiting
    except (ValueError, TypeError, KeyError, AttributeError):
        raise ScoregateError(
            f"the rollout's Langfuse cursor is not one this version wrote: {text[:80]!r}",
            hint="was the rollout watched with --scores FILE before? keep watching it with the same --scores FILE",
        ) from None


def read_live_calls(
    remote: Remote,
    prompt: str,
    versions: tuple[int, ...],
    metric: str,
    cursor: str | None,
    *,
    start: dt.datetime,
    now: dt.datetime | None = None,
    lookback_s: float = LOOKBACK_S,
    wait_s: float = WAIT_S,
    environment: str | None = None,
) -> tuple[list[LiveCall], str]:
    """Return the calls of `versions` (in `environment` when given) started at or after `start`, not returned
    before, whose score is in (or that failed, or waited `wait_s`), oldest first; and the cursor after them."""
    since, seen, waiting = _cursor(cursor)
    lower = start if since is None else max(start, since - dt.timedelta(seconds=lookback_s))
    fresh: dict[str, LiveCall] = {}
    for version in versions:
        for row in _generations(remote, prompt, version, lower, environment):
            tid = str(row.trace_id)
            if tid in seen or tid in fresh or row.prompt_name != prompt or row.prompt_version != version:
                continue
            if environment not in (None, row.environment):  # checked again, whatever the server applied
                continue
            if _when(row.start_time) >= start:
                fresh[tid] = _call(row)
    for tid, call in fresh.items():
        seen[tid] = call.at
    now_s = (now or dt.datetime.now(dt.UTC)).timestamp()
    done, still = [], {}
    for call in [*waiting.values(), *fresh.values()]:
        score = _score(remote, call.trace_id, metric)
        if score is not None or call.error or now_s - call.at > wait_s:
            done.append(LiveCall(**{**asdict(call), "score": score}))
        else:
            still[call.trace_id] = call
    newest = max([*seen.values(), *([since.timestamp()] if since else [])], default=None)
    after = {
        "since": None if newest is None else _iso(dt.datetime.fromtimestamp(newest, dt.UTC)),
        "seen": {k: v for k, v in seen.items() if newest is None or v >= newest - lookback_s},
        "waiting": {k: asdict(v) for k, v in still.items()},
    }
    return sorted(done, key=lambda c: c.at), json.dumps(after, separators=(",", ":"))
