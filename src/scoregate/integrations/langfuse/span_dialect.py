"""SDK 5's span attributes rewritten as SDK 4 writes them, for a Langfuse server older than v4.59.

Recorded on v4.16 (shared/data/langfuse-recordings, the `run_experiment` exports of both SDKs): SDK 5 JSON-encodes
every metadata value (`langfuse.trace.metadata.desired_style` = `"catchup"` with the quotes) and sends the
experiment's and its item's metadata as one JSON object each; SDK 4 sends a string as it is, an integer as an
integer, and one attribute per key (`langfuse.experiment.metadata.suite`). A newer server decodes SDK 5's form;
an older one stores the text, so a trace's metadata showed `"\\"catchup\\""`. Only the encoding changes here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

PER_KEY = ("langfuse.trace.metadata.", "langfuse.observation.metadata.")
"""Attributes holding one metadata value each."""
WHOLE = ("langfuse.experiment.metadata", "langfuse.experiment.item.metadata")
"""Attributes holding a whole metadata object (SDK 5); SDK 4 sends one attribute per key under the same name."""


def _decoded(text: Any) -> Any:
    """SDK 4's value for one of SDK 5's JSON-encoded metadata values: a string as is, an integer as an integer,
    anything else as its JSON text (what SDK 4 sends for floats, booleans, lists and objects)."""
    if not isinstance(text, str):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return text


def _flattened(prefix: str, value: Any) -> Iterator[tuple[str, str]]:
    """SDK 4's attributes for one metadata object: nested keys joined by dots, non-strings as JSON text."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flattened(f"{prefix}.{key}", inner)
    elif value is not None:
        yield prefix, value if isinstance(value, str) else json.dumps(value)


def sdk4_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Return the attributes as SDK 4 would have written them (a copy; nothing else is touched)."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if key in WHOLE and isinstance(value, str):
            try:
                whole = json.loads(value)
            except ValueError:
                out[key] = value
                continue
            if isinstance(whole, dict):
                out.update(_flattened(key, whole))
            else:
                out[key] = value
        elif key.startswith(PER_KEY):
            out[key] = _decoded(value)
        else:
            out[key] = value
    return out
