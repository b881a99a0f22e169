"""Production traces sent to the fake Langfuse as the SDK sends them (OTLP protobuf), for the live-judge tests."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from support.fake_langfuse import FakeLangfuse


def trace_id_of(seed: str) -> str:
    """A fixed 32-hex trace id for a seed."""
    return hashlib.sha256(seed.encode()).hexdigest()[:32]


def send_trace(
    fake: FakeLangfuse,
    seed: str,
    *,
    name: str = "summarize",
    environment: str = "production",
    tags: tuple[str, ...] = (),
    metadata: dict[str, str] | None = None,
    experiment: dict[str, str] | None = None,
    age_days: float = 0,
    input: Any = None,
    output: Any = None,
) -> str:
    """Export one root span (a production trace, or an experiment item's root with `experiment` attributes) and
    return its trace id."""
    export = ExportTraceServiceRequest()
    span = export.resource_spans.add().scope_spans.add().spans.add()
    trace_id = trace_id_of(seed)
    span.trace_id, span.span_id, span.name = bytes.fromhex(trace_id), bytes.fromhex(trace_id[:16]), name
    span.start_time_unix_nano = time.time_ns() - int(age_days * 86400e9)
    span.end_time_unix_nano = span.start_time_unix_nano + 1_000_000
    attributes: dict[str, Any] = {
        "langfuse.observation.type": "span",
        "langfuse.trace.name": name,
        "langfuse.environment": environment,
        **{f"langfuse.trace.metadata.{k}": v for k, v in (metadata or {}).items()},
        **{f"langfuse.experiment.{k}": v for k, v in (experiment or {}).items()},
        **({"langfuse.observation.input": json.dumps(input)} if input is not None else {}),
        **({"langfuse.observation.output": json.dumps(output)} if output is not None else {}),
    }
    for key, value in attributes.items():
        attribute = span.attributes.add()
        attribute.key, attribute.value.string_value = key, value
    if tags:
        attribute = span.attributes.add()
        attribute.key = "langfuse.trace.tags"
        for tag in tags:
            attribute.value.array_value.values.add().string_value = tag
    with httpx.Client(base_url=fake.base_url, auth=(fake.public_key, fake.secret_key)) as http:
        answer = http.post(
            "/api/public/otel/v1/traces",
            content=export.SerializeToString(),
            headers={"content-type": "application/x-protobuf"},
        )
    answer.raise_for_status()
    return trace_id
