"""What the Langfuse SDK really delivered: scores accepted per id, traces exported, ids fixed per item.

The SDK sends scores and spans from background threads and never raises; a rejected batch leaves only a
log line. A mirror session therefore gives the SDK its own HTTP client (whose response hook reads every
score answer), its own span exporter (which records each export's result) and its own tracer provider
(whose id generator derives trace and span ids from run and item), so a repeated mirror upserts instead
of duplicating and every loss is counted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections import deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace import format_trace_id

from scoregate.integrations.langfuse.client import SDK_VERSION, LangfuseSettings
from scoregate.support.redaction import redact

if TYPE_CHECKING:
    from langfuse import Langfuse

ARRAY_REJECTED = "expected object, received array"
SCORES_PATH = "/api/public/scores"
INGESTION_PATH = "/api/public/ingestion"
FLUSH_AT = 50
MAX_ERRORS = 20
"""Distinct server error messages kept (a failing server answers every batch with the same few)."""
FLUSH_INTERVAL_S = 0.2  # a mirror ends with flush(): a short interval keeps the last partial batch from waiting


def trace_id_for(seed: str) -> str:
    """Return the trace id Langfuse derives from `seed` (same as `Langfuse.create_trace_id(seed=seed)`)."""
    return hashlib.sha256(seed.encode("utf-8")).digest()[:16].hex()


def _span_id_for(seed: str, count: int) -> int:
    return int(hashlib.sha256(f"{seed}#{count}".encode()).hexdigest()[:16], 16) or 1


class ItemIdGenerator(IdGenerator):
    """Ids for the runner's spans: the n-th new trace gets the n-th planned seed, its spans count from it.

    The runner starts one root span per item, in data order when it runs one item at a time; each trace's
    span ids are then numbered from its seed, so the same item gets the same ids on every mirror.
    """

    def __init__(self) -> None:
        self._planned: deque[str] = deque()
        self._seed: str | None = None
        self._count = 0
        self._random = RandomIdGenerator()
        self._lock = threading.Lock()

    def plan(self, seeds: Sequence[str]) -> None:
        """Queue the seeds of the traces about to start, in the order they will start."""
        with self._lock:
            self._planned.extend(seeds)

    def generate_trace_id(self) -> int:
        """Return the next planned trace id (random once the plan is used up)."""
        with self._lock:
            if not self._planned:
                self._seed = None
                return self._random.generate_trace_id()
            self._seed, self._count = self._planned.popleft(), 0
            return int(trace_id_for(self._seed), 16)

    def generate_span_id(self) -> int:
        """Return the next span id of the current trace."""
        with self._lock:
            if self._seed is None:
                return self._random.generate_span_id()
            self._count += 1
            return _span_id_for(self._seed, self._count)


class RootSpans(SpanProcessor):
    """The root spans still open, by trace id: the runner opens an item's root span before its task runs, and
    the task sets the trace's tags and version on it (Langfuse v4 reads them from the root span)."""

    def __init__(self) -> None:
        self._open: dict[int, Span] = {}
        self._lock = threading.Lock()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Remember a span without a parent."""
        if span.parent is None:
            with self._lock:
                self._open[span.context.trace_id] = span

    def on_end(self, span: ReadableSpan) -> None:
        """Forget a root span once it ended."""
        if span.parent is None and span.context is not None:
            with self._lock:
                self._open.pop(span.context.trace_id, None)

    def get(self, trace_id: str) -> Span | None:
        """The open root span of this trace (hex id), or None."""
        if not trace_id:
            return None
        with self._lock:
            return self._open.get(int(trace_id, 16))


class Retimer:
    """Recorded times for spans made after the fact: a generation gets its model call's start and end, and
    the other spans of an item's trace the window of its calls, so traces sit when the model was called,
    not when the mirror ran."""

    def __init__(self) -> None:
        self._spans: dict[int, tuple[int, int]] = {}
        self._traces: dict[int, tuple[int, int]] = {}
        self._lock = threading.Lock()

    def span(self, span_id: int, start_ns: int, end_ns: int) -> None:
        """Give one span (a generation) its recorded start and end."""
        with self._lock:
            self._spans[span_id] = (start_ns, max(start_ns, end_ns))

    def forget(self) -> None:
        """Drop every recorded time: the spans they were for are exported (a mirror calls this after a flush)."""
        with self._lock:
            self._spans.clear()
            self._traces.clear()

    def trace(self, trace_id: int, start_ns: int, end_ns: int) -> None:
        """Give every other span of a trace the item's recorded window."""
        with self._lock:
            self._traces[trace_id] = (start_ns, max(start_ns, end_ns))

    def apply(self, span: ReadableSpan) -> ReadableSpan:
        """Return `span` with its recorded times (a copy), or `span` itself when none is known."""
        context = span.context
        if context is None:
            return span
        with self._lock:
            times = self._spans.get(context.span_id) or self._traces.get(context.trace_id)
        if times is None:
            return span
        return ReadableSpan(
            name=span.name, context=context, parent=span.parent, resource=span.resource,
            attributes=span.attributes, events=span.events, links=span.links, kind=span.kind,
            status=span.status, start_time=times[0], end_time=times[1],
            instrumentation_scope=span.instrumentation_scope,
        )  # fmt: skip


class ConfirmingSpanExporter(SpanExporter):
    """Wraps the OTLP exporter and remembers which traces were exported and which failed."""

    def __init__(self, inner: SpanExporter, retimer: Retimer | None = None) -> None:
        self._inner = inner
        self._retimer = retimer
        self._lock = threading.Lock()
        self.exported: set[str] = set()
        self.failed: set[str] = set()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Export through the wrapped exporter (with recorded times) and record the outcome per trace id."""
        if self._retimer is not None:
            spans = [self._retimer.apply(span) for span in spans]
        result = self._inner.export(spans)
        traces = {format_trace_id(s.context.trace_id) for s in spans if s.context is not None}
        with self._lock:
            (self.exported if result == SpanExportResult.SUCCESS else self.failed).update(traces)
        return result

    def confirmed(self, trace_id: str) -> bool:
        """True when spans of this trace were exported and none failed."""
        with self._lock:
            return trace_id in self.exported and trace_id not in self.failed

    def forget(self, trace_ids: Collection[str]) -> None:
        """Drop what is recorded of these traces (confirmed and recorded elsewhere, or to be sent again)."""
        with self._lock:
            self.exported.difference_update(trace_ids)
            self.failed.difference_update(trace_ids)

    def shutdown(self) -> None:
        """Shut the wrapped exporter down."""
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush the wrapped exporter."""
        return self._inner.force_flush(timeout_millis)


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
    array_rejected: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def on_response(self, response: httpx.Response) -> None:
        """httpx response hook: read score posts (SDK 5 arrays, SDK 4 ingestion batches) and their answers."""
        request = response.request
        if request.method != "POST" or not request.url.path.endswith((SCORES_PATH, INGESTION_PATH)):
            return
        body, answer = _json_or_none(request.content), _json_or_none(response.read())
        with self._lock:
            if request.url.path.endswith(SCORES_PATH):
                self._scores_answer(response.status_code, body, answer)
            else:
                self._ingestion_answer(response.status_code, body, answer)

    def _scores_answer(self, status: int, body: Any, answer: Any) -> None:
        scores = body if isinstance(body, list) else [body] if isinstance(body, dict) else []
        ids = {str(s.get("id")) for s in scores if isinstance(s, dict) and s.get("id")}
        if status in (200, 201, 202):
            self.accepted |= ids
            return
        if status == 207 and isinstance(answer, dict):
            self.partial |= ids
            self.partial_accepted += int(answer.get("accepted") or 0)
            self.partial_rejected += int(answer.get("rejected") or 0)
            self._error(f"HTTP 207 (part of a batch refused): {_describe(answer.get('errors'))}")
            return
        self.array_rejected |= ARRAY_REJECTED in json.dumps(answer)
        self._error(f"HTTP {status}: {_describe(answer)}")
        self.rejected |= ids

    def _ingestion_answer(self, status: int, body: Any, answer: Any) -> None:
        events = body.get("batch", []) if isinstance(body, dict) else []
        score_of = {e.get("id"): str((e.get("body") or {}).get("id")) for e in events if isinstance(e, dict)}
        if status in (200, 201, 202, 207) and isinstance(answer, dict):
            for success in answer.get("successes") or []:
                if success.get("id") in score_of:
                    self.accepted.add(score_of[success["id"]])
            for error in answer.get("errors") or []:
                if error.get("id") in score_of:
                    self.rejected.add(score_of[error["id"]])
                    self._error(f"HTTP {error.get('status')}: {_describe(error)}")
            return
        self.rejected |= set(score_of.values())
        self._error(f"HTTP {status}: {_describe(answer)}")

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


def _describe(answer: Any) -> str:
    """Return the distinct messages of an error answer, however deeply the server nested them."""
    if isinstance(answer, list):
        return "; ".join(dict.fromkeys(_describe(a) for a in answer)) or "no details"
    if isinstance(answer, dict):
        head = str(answer.get("message") or "")
        nested = answer.get("error") if answer.get("error") is not None else answer.get("errors")
        tail = _describe(nested) if isinstance(nested, list | dict) else str(nested or "")
        return ": ".join(part for part in (head, tail) if part and part != "no details") or "no details"
    return redact(str(answer))[:300] if answer is not None else "no details"


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


class MirrorClient:
    """An SDK client wired to a ledger, a confirming exporter and per-item ids; close() flushes and shuts it."""

    def __init__(self, settings: LangfuseSettings, *, timeout_s: int = 20) -> None:
        from langfuse import Langfuse
        from opentelemetry.exporter.otlp.proto.http import Compression
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.settings = settings
        self.ledger = ScoreLedger()
        self.ids = ItemIdGenerator()
        auth = base64.b64encode(f"{settings.public_key}:{settings.secret_key}".encode()).decode("ascii")
        otlp = OTLPSpanExporter(
            endpoint=f"{settings.host}/api/public/otel/v1/traces",
            headers={
                "Authorization": f"Basic {auth}",
                "x-langfuse-sdk-name": "python",
                "x-langfuse-sdk-version": SDK_VERSION,
                "x-langfuse-public-key": settings.public_key,
                "x-langfuse-ingestion-version": "4",
            },
            timeout=timeout_s,
            compression=Compression.Gzip,
        )
        self.retimer = Retimer()
        self.exporter = ConfirmingSpanExporter(otlp, self.retimer)
        self.provider = TracerProvider(id_generator=self.ids)
        self.roots = RootSpans()
        self.provider.add_span_processor(self.roots)
        self._http = httpx.Client(timeout=timeout_s, event_hooks={"response": [self.ledger.on_response]})
        _evict(settings.public_key)  # the SDK keeps one set of resources per key; this session needs its own
        self.langfuse: Langfuse = Langfuse(
            public_key=settings.public_key,
            secret_key=settings.secret_key,
            host=settings.host,
            timeout=timeout_s,
            httpx_client=self._http,
            tracer_provider=self.provider,
            span_exporter=self.exporter,
            sample_rate=1.0,
            tracing_enabled=True,
            flush_at=FLUSH_AT,
            flush_interval=FLUSH_INTERVAL_S,
        )

    def close(self) -> None:
        """Flush everything, stop the SDK's threads and forget this client, so the next session starts clean."""
        try:
            self.langfuse.shutdown()
            self.provider.shutdown()
        finally:
            _evict(self.settings.public_key)
            self._http.close()


def _evict(public_key: str) -> None:
    """Drop the SDK's cached resources for `public_key` (a registry that is private to the SDK)."""
    try:
        from langfuse._client.resource_manager import LangfuseResourceManager
    except ImportError:  # pragma: no cover - a future SDK without the registry
        return
    instances = getattr(LangfuseResourceManager, "_instances", None)
    if isinstance(instances, dict):
        with LangfuseResourceManager._lock:
            instances.pop(public_key, None)
