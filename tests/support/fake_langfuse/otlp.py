"""Decode OTLP/HTTP trace exports (protobuf or JSON) into flat span dicts."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue


class OtlpDecodeError(ValueError):
    """The body is not an OTLP ExportTraceServiceRequest."""


def _value(value: AnyValue) -> Any:
    """Convert an OTLP AnyValue into the plain Python value it holds."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    return getattr(value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    """Convert repeated KeyValue into a dict."""
    out: dict[str, Any] = {}
    pair: KeyValue
    for pair in pairs:
        out[pair.key] = _value(pair.value)
    return out


def decode_spans(body: bytes, content_type: str) -> list[dict[str, Any]]:
    """Return the spans of an OTLP export body, each with hex ids, nanosecond times and flat attributes."""
    request = ExportTraceServiceRequest()
    try:
        if "json" in content_type:
            json_format.Parse(body.decode("utf-8"), request)
        else:
            request.ParseFromString(body)
    except (DecodeError, json_format.ParseError, UnicodeDecodeError) as exc:
        raise OtlpDecodeError(str(exc)) from exc
    spans = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    {
                        "name": span.name,
                        "traceId": span.trace_id.hex(),
                        "spanId": span.span_id.hex(),
                        "parentSpanId": span.parent_span_id.hex() or None,
                        "startTimeUnixNano": span.start_time_unix_nano,
                        "endTimeUnixNano": span.end_time_unix_nano,
                        "status": {"code": span.status.code, "message": span.status.message},
                        "attributes": _attributes(span.attributes),
                        "scope": {
                            "name": scope_spans.scope.name,
                            "version": scope_spans.scope.version,
                            "attributes": _attributes(scope_spans.scope.attributes),
                        },
                        "resource": resource,
                    }
                )
    return spans
