"""Scores posted by scoregate itself, in the form the server's generation takes, every answer read per score id.

The SDKs differ in how they send scores (SDK 4: `score-create` events to /api/public/ingestion; SDK 5: a JSON
array to /api/public/scores, which servers older than v4.59 refuse) and drop a refused batch with a log line.
`ScoreSender` posts batches itself, in the form `ServerGeneration.scores` names (and switches to events when a
server refuses an array whatever its version said), retries what failed in passing (no answer, 408, 429, 5xx),
and records what the server answered about each score id in a `ScoreLedger`: the count a mirror confirms.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx

from scoregate.integrations.langfuse.client import LangfuseSettings
from scoregate.integrations.langfuse.server_generation import ARRAY_REJECTED, ScoresForm, ServerGeneration
from scoregate.support.redaction import redact

SCORES_PATH = "/api/public/scores"
INGESTION_PATH = "/api/public/ingestion"
BATCH_SIZE = 50
BATCH_BYTES = 1_000_000
"""A batch is sent before it grows past this (the SDKs' limit; the ingestion endpoint takes 3.5 MB)."""
TRIES = 3
MAX_WAIT_S = 30.0
MAX_ERRORS = 20
"""Distinct server error messages kept (a failing server answers every batch with the same few)."""
RETRIED = frozenset({408, 429})


def json_safe(value: Any) -> Any:
    """A JSON value for `value`: non-finite floats become null, times ISO text, anything else unknown its text."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if value is None or isinstance(value, str | int | bool):
        return value
    return str(value)


@dataclass(frozen=True)
class ScoreWrite:
    """One score as scoregate posts it: a fixed id and time (Langfuse replaces a score on id, name and day)."""

    id: str
    name: str
    value: float | str
    timestamp: dt.datetime
    data_type: str | None = None
    comment: str | None = None
    metadata: dict[str, Any] | None = None
    trace_id: str | None = None
    observation_id: str | None = None
    dataset_run_id: str | None = None
    config_id: str | None = None

    def body(self) -> dict[str, Any]:
        """The score's fields as the API names them (no time: the array form and the event carry it apart)."""
        fields = {
            "id": self.id,
            "traceId": self.trace_id,
            "observationId": self.observation_id,
            "datasetRunId": self.dataset_run_id,
            "name": self.name,
            "value": self.value,
            "comment": self.comment,
            "metadata": json_safe(self.metadata) if self.metadata is not None else None,
            "dataType": self.data_type,
            "configId": self.config_id,
        }
        return {k: v for k, v in fields.items() if v is not None}

    def stamp(self) -> str:
        """The score's time as ISO-8601 UTC text."""
        moment = self.timestamp if self.timestamp.tzinfo else self.timestamp.replace(tzinfo=dt.UTC)
        return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


@dataclass
class ScoreLedger:
    """Every score answer the server gave, by score id: the count of scores sent vs accepted."""

    accepted: set[str] = field(default_factory=set)
    rejected: set[str] = field(default_factory=set)
    partial: set[str] = field(default_factory=set)
    """Scores in batches the server partly refused (HTTP 207 does not say which): re-sent by the next sync."""
    partial_accepted: int = 0
    partial_rejected: int = 0
    server_errors: list[str] = field(default_factory=list)
    refusals: int = 0
    """Scores the server answered it will not take (a 4xx other than 408/429), as opposed to no answer."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def array_answer(self, ids: list[str], status: int, answer: Any) -> None:
        """Record the answer to one array of scores (POST /api/public/scores)."""
        with self._lock:
            if status in (200, 201, 202):
                self.accepted.update(ids)
            elif status == 207 and isinstance(answer, dict):
                self.partial.update(ids)
                self.partial_accepted += int(answer.get("accepted") or 0)
                rejected = int(answer.get("rejected") or 0)
                self.partial_rejected += rejected
                self.refusals += rejected
                self._error(f"HTTP 207 (part of a batch refused): {error_text(answer.get('errors'))}")
            else:
                self.rejected.update(ids)
                self.refusals += len(ids)
                self._error(f"HTTP {status}: {error_text(answer)}")

    def events_answer(self, score_of: dict[str, str], status: int, answer: Any) -> list[str]:
        """Record the answer to one ingestion batch (event id → score id); return the event ids to send again
        (an event the server failed on in passing)."""
        again: list[str] = []
        with self._lock:
            if status not in (200, 201, 202, 207) or not isinstance(answer, dict):
                self.rejected.update(score_of.values())
                self.refusals += len(score_of)
                self._error(f"HTTP {status}: {error_text(answer)}")
                return again
            for success in answer.get("successes") or []:
                if success.get("id") in score_of:
                    self.accepted.add(score_of[success["id"]])
            for error in answer.get("errors") or []:
                event, code = error.get("id"), int(error.get("status") or 400)
                if event not in score_of:
                    continue
                if code >= 500 or code in RETRIED:
                    again.append(event)
                    continue
                self.rejected.add(score_of[event])
                self.refusals += 1
                self._error(f"HTTP {code}: {error_text(error)}")
        return again

    def unanswered(self, message: str) -> None:
        """Note why a batch got no usable answer (its scores stay unconfirmed: the next sync sends them)."""
        with self._lock:
            self._error(message)

    def _error(self, message: str) -> None:
        if len(self.server_errors) < MAX_ERRORS and message not in self.server_errors:
            self.server_errors.append(message)

    def counts(self, score_ids: list[str]) -> tuple[int, int]:
        """Return (accepted, rejected) among `score_ids`; partly refused batches count as the server said."""
        with self._lock:
            accepted = sum(i in self.accepted for i in score_ids)
            rejected = sum(i in self.rejected and i not in self.accepted for i in score_ids)
            if any(i in self.partial and i not in self.accepted for i in score_ids):
                accepted, rejected = accepted + self.partial_accepted, rejected + self.partial_rejected
            return accepted, rejected

    def is_accepted(self, score_id: str) -> bool:
        """True when the server answered that it accepted this score."""
        with self._lock:
            return score_id in self.accepted

    def forget(self) -> None:
        """Drop the answers read so far (a mirror calls this once it has counted a flushed chunk's scores)."""
        with self._lock:
            self.accepted, self.rejected, self.partial = set(), set(), set()
            self.partial_accepted = self.partial_rejected = 0


def error_text(answer: Any) -> str:
    """Return the distinct messages of an error answer, however deeply the server nested them."""
    if isinstance(answer, list):
        return "; ".join(dict.fromkeys(error_text(a) for a in answer)) or "no details"
    if isinstance(answer, dict):
        head = str(answer.get("message") or "")
        nested = answer.get("error") if answer.get("error") is not None else answer.get("errors")
        tail = error_text(nested) if isinstance(nested, list | dict) else str(nested or "")
        return ": ".join(part for part in (head, tail) if part and part != "no details") or "no details"
    return redact(str(answer))[:300] if answer is not None else "no details"


def _json_or_text(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


class ScoreSender:
    """Posts scores in batches, in the form the server's generation takes; `ledger` holds every answer."""

    def __init__(
        self,
        settings: LangfuseSettings,
        generation: ServerGeneration,
        *,
        http: httpx.Client | None = None,
        batch_size: int = BATCH_SIZE,
        tries: int = TRIES,
        sleep: Callable[[float], None] = time.sleep,
        timeout_s: float = 20,
    ) -> None:
        self.settings = settings
        self.form: ScoresForm = generation.scores
        self.switched = False
        """True once the server refused an array although its version said it takes one (a proxy hid it)."""
        self.ledger = ScoreLedger()
        self.sent = 0
        self._own_http = http is None
        self._http = http or httpx.Client(timeout=timeout_s)
        self._auth = (settings.public_key, settings.secret_key)
        self._batch_size = batch_size
        self._tries = tries
        self._sleep = sleep
        self._pending: list[ScoreWrite] = []
        self._pending_bytes = 0

    def send(self, score: ScoreWrite) -> None:
        """Queue one score; a full batch is posted at once."""
        size = len(json.dumps(score.body(), default=str))
        if self._pending and self._pending_bytes + size > BATCH_BYTES:
            self.flush()
        self._pending.append(score)
        self._pending_bytes += size
        if len(self._pending) >= self._batch_size:
            self.flush()

    def send_all(self, scores: Iterable[ScoreWrite]) -> None:
        """Queue every score, then post what is left."""
        for score in scores:
            self.send(score)
        self.flush()

    def flush(self) -> None:
        """Post the queued scores and read the answers."""
        batch, self._pending, self._pending_bytes = self._pending, [], 0
        if batch:
            self.sent += len(batch)
            self._post(batch)

    def close(self) -> None:
        """Post what is queued, then close the connections this sender opened."""
        try:
            self.flush()
        finally:
            if self._own_http:
                self._http.close()

    def _post(self, batch: list[ScoreWrite]) -> None:
        if self.form == "array":
            body = [{**score.body(), "timestamp": score.stamp()} for score in batch]
            response = self._request(SCORES_PATH, body)
            if response is None:
                return
            answer = _json_or_text(response)
            if response.status_code == 400 and ARRAY_REJECTED in json.dumps(answer):
                self.form, self.switched = "ingestion", True  # an older server behind whatever said otherwise
                self._post(batch)
                return
            self.ledger.array_answer([score.id for score in batch], response.status_code, answer)
            return
        self._post_events({uuid.uuid4().hex: score for score in batch})

    def _post_events(self, events: dict[str, ScoreWrite], attempt: int = 1) -> None:
        batch = [
            {"id": event, "type": "score-create", "timestamp": score.stamp(), "body": score.body()}
            for event, score in events.items()
        ]
        response = self._request(INGESTION_PATH, {"batch": batch, "metadata": {"batch_size": len(batch)}})
        if response is None:
            return
        score_of = {event: score.id for event, score in events.items()}
        again = self.ledger.events_answer(score_of, response.status_code, _json_or_text(response))
        if again and attempt < self._tries:
            self._sleep(min(MAX_WAIT_S, 2.0**attempt / 4))
            self._post_events({event: events[event] for event in again}, attempt + 1)
        elif again:
            self.ledger.unanswered(f"{len(again)} score(s) failed on the server in passing (retried {attempt}x)")

    def _request(self, path: str, body: Any) -> httpx.Response | None:
        """POST with retries of what fails in passing; None when no usable answer came (noted in the ledger)."""
        url = f"{self.settings.host}{path}"
        problem = "no answer"
        for attempt in range(1, self._tries + 1):
            try:
                response = self._http.post(url, json=body, auth=self._auth)
            except httpx.HTTPError as exc:
                problem = f"no answer ({type(exc).__name__}: {redact(str(exc))[:200]})"
            else:
                if response.status_code not in RETRIED and response.status_code < 500:
                    return response
                problem = f"HTTP {response.status_code}: {error_text(_json_or_text(response))}"
                wait = _retry_after(response)
                if wait is not None and attempt < self._tries:
                    self._sleep(min(MAX_WAIT_S, wait))
                    continue
            if attempt < self._tries:
                self._sleep(min(MAX_WAIT_S, 2.0**attempt / 4))
        self.ledger.unanswered(f"{problem} (tried {self._tries}x)")
        return None


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
