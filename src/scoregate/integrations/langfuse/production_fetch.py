"""An experiment's production traces, read from Langfuse through the SDK's API client.

One endpoint serves it on Langfuse v4.16 (dual write) and on current servers, under SDK 4 and SDK 5 alike:
GET /api/public/v2/observations (`api.observations.get_many`), cursor-paged. Two listings over the window:

1. the generations linked to the prompt version (`promptName`, `promptVersion`), with the trace's name,
   environment and tags (`fields=core,basic,io,prompt,trace_context`);
2. the traces' root observations (`isRootObservation`), whose input, output and metadata are what the
   `production:` mapping reads (`fields=core,basic,io,metadata`), started up to ROOT_LEAD before the window.

Every condition goes in the structured `filter` (it takes precedence over the query parameters) and is checked
again on each row, so a server that ignores one still yields only the traffic asked for. A label is turned into
its version first (GET /api/public/v2/prompts/{name}?label=). Input and output come back as the JSON text the
SDK sent; they are parsed here.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from scoregate.catalog.production import ProductionSpec
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.remote import Remote, path_part

PAGE_SIZE = 100
ROOT_LEAD = dt.timedelta(hours=1)
"""How long before the window a trace's root may start: its generation, inside the window, starts after it."""
GENERATION_FIELDS = "core,basic,io,prompt,trace_context"
ROOT_FIELDS = "core,basic,io,metadata"


@dataclass(frozen=True)
class ProductionTrace:
    """One production trace as the mapping reads it: `document` holds its `input`, `output` and `metadata`."""

    trace_id: str
    timestamp: str
    prompt: str
    """`name@version` of the prompt its generation used."""
    document: dict[str, Any]


@dataclass
class ProductionFetch:
    """The traces of one window, newest first, and those left out with the reason."""

    traces: list[ProductionTrace] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    prompt: str = ""
    """The prompt name, and `@version` when one version was selected."""
    start: dt.datetime | None = None
    end: dt.datetime | None = None


def _json(text: Any) -> Any:
    """A value the API sent as JSON text, parsed; plain text stays text."""
    if isinstance(text, str):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def _when(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _pages(remote: Remote, doing: str, conditions: list[dict[str, Any]], **params: Any) -> Iterator[Any]:
    """Every observation the filter selects, page after page."""
    cursor = None
    while True:
        page = remote.call(
            doing,
            remote.api.observations.get_many,
            filter=json.dumps(conditions),
            limit=PAGE_SIZE,
            cursor=cursor,
            **params,
        )
        yield from page.data
        cursor = getattr(page.meta, "cursor", None)
        if not cursor or not page.data:
            return


def resolve_version(remote: Remote, spec: ProductionSpec, prompt: str) -> int | None:
    """The prompt version the filter selects: its `version:`, the version under its `label:`, or None (any)."""
    link = spec.filter.prompt
    if link.version is not None:
        return link.version
    if link.label is None:
        return None
    found = remote.find(
        f"reading prompt {prompt!r} label {link.label!r}", remote.api.prompts.get, path_part(prompt), label=link.label
    )
    if found is None:
        raise ScoregateError(
            f"Langfuse has no version of prompt {prompt!r} labelled {link.label!r}",
            hint="check `production:` filter.prompt in scoregate.yaml, or push the prompt (`scoregate prompts sync`)",
        )
    return int(found.version)


def _shared_conditions(spec: ProductionSpec, start: dt.datetime, end: dt.datetime) -> list[dict[str, Any]]:
    conditions: list[dict[str, Any]] = [
        {"type": "datetime", "column": "startTime", "operator": ">=", "value": _iso(start)},
        {"type": "datetime", "column": "startTime", "operator": "<", "value": _iso(end)},
    ]
    chosen = spec.filter
    if chosen.trace_name:
        conditions.append({"type": "string", "column": "traceName", "operator": "=", "value": chosen.trace_name})
    if chosen.environment:
        conditions.append({"type": "string", "column": "environment", "operator": "=", "value": chosen.environment})
    if chosen.tags:
        conditions.append({"type": "arrayOptions", "column": "tags", "operator": "all of", "value": chosen.tags})
    return conditions


def _selected(row: Any, spec: ProductionSpec, start: dt.datetime, end: dt.datetime) -> bool:
    """Whether a generation row meets the filter (checked again here, whatever the server applied)."""
    chosen = spec.filter
    return (
        start <= _when(row.start_time) < end
        and chosen.trace_name in (None, getattr(row, "trace_name", None))
        and chosen.environment in (None, row.environment)
        and set(chosen.tags) <= set(getattr(row, "tags", None) or [])
    )


def fetch_production(
    remote: Remote,
    spec: ProductionSpec,
    prompt: str,
    window: tuple[dt.datetime, dt.datetime],
    *,
    limit: int | None = None,
) -> ProductionFetch:
    """The production traces of `window` (newest first, at most `limit`) whose generation used `prompt` as the
    filter says, each with the root observation's input, output and metadata."""
    start, end = window
    version = resolve_version(remote, spec, prompt)
    result = ProductionFetch(prompt=f"{prompt}@{version}" if version is not None else prompt, start=start, end=end)
    linked = [
        *_shared_conditions(spec, start, end),
        {"type": "string", "column": "type", "operator": "=", "value": "GENERATION"},
        {"type": "string", "column": "promptName", "operator": "=", "value": prompt},
    ]
    if version is not None:
        linked.append({"type": "number", "column": "promptVersion", "operator": "=", "value": version})
    generations: dict[str, Any] = {}
    for row in _pages(remote, "listing production generations", linked, fields=GENERATION_FIELDS):
        right_prompt = row.prompt_name == prompt and version in (None, row.prompt_version)
        if right_prompt and _selected(row, spec, start, end) and row.trace_id not in generations:
            generations[row.trace_id] = row
            if limit is not None and len(generations) >= limit:
                break
    if not generations:
        return result
    roots = {
        row.trace_id: row
        for row in _pages(
            remote,
            "listing production traces",
            [
                *_shared_conditions(spec, start - ROOT_LEAD, end),
                {"type": "boolean", "column": "isRootObservation", "operator": "=", "value": True},
            ],
            fields=ROOT_FIELDS,
            expand_metadata=",".join(_metadata_keys(spec)) or None,
        )
        if row.trace_id in generations
    }
    for trace_id, generation in generations.items():
        root = roots.get(trace_id)
        if root is None:
            result.skipped.append((trace_id, "no root observation in the window (the trace is incomplete)"))
            continue
        output = _json(root.output) if root.output is not None else _json(generation.output)
        metadata = {k: _json(v) for k, v in (root.metadata or {}).items()}
        result.traces.append(
            ProductionTrace(
                trace_id=trace_id,
                timestamp=_iso(_when(generation.start_time)),
                prompt=f"{generation.prompt_name}@{generation.prompt_version}",
                document={"input": _json(root.input), "output": output, "metadata": metadata},
            )
        )
    return result


def _metadata_keys(spec: ProductionSpec) -> list[str]:
    """The metadata keys the mapping reads: asked for in full (the API truncates values past 200 characters)."""
    from scoregate.catalog.production_paths import parse_path

    keys = []
    for path in spec.mapping.paths().values():
        steps = parse_path(path)
        if steps[0] == "metadata" and len(steps) > 1 and isinstance(steps[1], str):
            keys.append(steps[1])
    return sorted(set(keys))
