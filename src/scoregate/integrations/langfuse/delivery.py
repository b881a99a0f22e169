"""What a Langfuse mirror really delivered: traces exported, ids fixed per item, scores accepted per id.

The SDK sends spans from background threads and never raises; a failed export leaves only a log line. A mirror
session therefore gives the SDK its own span exporter (which records each export's result and, for a server
older than v4.59, writes SDK 5's attributes as SDK 4 does) and its own tracer provider (whose id generator
derives trace and span ids from run and item), so a repeated mirror upserts instead of duplicating. Scores
do not go through the SDK: the session's `ScoreSender` posts them in the form the server takes and reads
every answer per score id.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections import deque
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

import httpx
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace import format_trace_id

from scoregate.integrations.langfuse.client import SDK_MAJOR, SDK_VERSION, LangfuseSettings
from scoregate.integrations.langfuse.score_sender import ScoreLedger, ScoreSender
from scoregate.integrations.langfuse.server_generation import ServerGeneration
from scoregate.integrations.langfuse.span_dialect import sdk4_attributes

if TYPE_CHECKING:
    from langfuse import Langfuse

FLUSH_AT = 50
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

    def times(self, span: ReadableSpan) -> tuple[int, int] | None:
        """The recorded (start, end) of `span`, or None when none is known."""
        context = span.context
        if context is None:
            return None
        with self._lock:
            return self._spans.get(context.span_id) or self._traces.get(context.trace_id)


def _rewritten(span: ReadableSpan, times: tuple[int, int] | None, sdk4: bool) -> ReadableSpan:
    """`span` with its recorded times and, with `sdk4`, SDK 4's attribute encoding (a copy), or `span` itself."""
    if times is None and not sdk4:
        return span
    start, end = times if times is not None else (span.start_time, span.end_time)
    attributes = sdk4_attributes(span.attributes or {}) if sdk4 else span.attributes
    return ReadableSpan(
        name=span.name, context=span.context, parent=span.parent, resource=span.resource,
        attributes=attributes, events=span.events, links=span.links, kind=span.kind,
        status=span.status, start_time=start, end_time=end,
        instrumentation_scope=span.instrumentation_scope,
    )  # fmt: skip


class ConfirmingSpanExporter(SpanExporter):
    """Wraps the OTLP exporter and remembers which traces were exported and which failed; `sdk4`: send the
    attributes as SDK 4 encodes them (a server older than v4.59 under SDK 5)."""

    def __init__(self, inner: SpanExporter, retimer: Retimer | None = None, *, sdk4: bool = False) -> None:
        self._inner = inner
        self._retimer = retimer
        self._sdk4 = sdk4
        self._lock = threading.Lock()
        self.exported: set[str] = set()
        self.failed: set[str] = set()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Export through the wrapped exporter (recorded times, the server's encoding) and record the outcome per
        trace id."""
        if self._retimer is not None or self._sdk4:
            retimer = self._retimer
            spans = [_rewritten(span, retimer.times(span) if retimer else None, self._sdk4) for span in spans]
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


class MirrorClient:
    """An SDK client wired to a confirming exporter and per-item ids, and a score sender for the server's
    generation; close() flushes and shuts everything."""

    def __init__(self, settings: LangfuseSettings, generation: ServerGeneration, *, timeout_s: int = 20) -> None:
        from langfuse import Langfuse
        from opentelemetry.exporter.otlp.proto.http import Compression
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.settings = settings
        self.generation = generation
        self.http = httpx.Client(timeout=timeout_s)
        """The session's connections: the SDK's API calls, the scores, the dataset run items."""
        self.scores = ScoreSender(settings, generation, http=self.http)
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
        self.exporter = ConfirmingSpanExporter(otlp, self.retimer, sdk4=generation.older and SDK_MAJOR >= 5)
        self.provider = TracerProvider(id_generator=self.ids)
        self.roots = RootSpans()
        self.provider.add_span_processor(self.roots)
        _evict(settings.public_key)  # the SDK keeps one set of resources per key; this session needs its own
        self.langfuse: Langfuse = Langfuse(
            public_key=settings.public_key,
            secret_key=settings.secret_key,
            host=settings.host,
            timeout=timeout_s,
            httpx_client=self.http,
            tracer_provider=self.provider,
            span_exporter=self.exporter,
            sample_rate=1.0,
            tracing_enabled=True,
            flush_at=FLUSH_AT,
            flush_interval=FLUSH_INTERVAL_S,
        )

    @property
    def ledger(self) -> ScoreLedger:
        """What the server answered about every score posted so far."""
        return self.scores.ledger

    def flush(self) -> None:
        """Post the queued scores and export the finished spans (both answers are in when it returns)."""
        self.scores.flush()
        self.langfuse.flush()

    def close(self) -> None:
        """Flush everything, stop the SDK's threads and forget this client, so the next session starts clean."""
        try:
            self.scores.flush()
            self.langfuse.shutdown()
            self.provider.shutdown()
        finally:
            _evict(self.settings.public_key)
            self.http.close()


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
