"""Topics, risks and actions of one sample, read from a gold file or a model reply and normalised."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scoregate.tracks.tags.metrics.vocabulary import normalise_risk_type, normalise_severity, normalise_topic


@dataclass(frozen=True, slots=True)
class Risk:
    """A risk: its (normalised) type and severity."""

    type: str
    severity: str

    def key(self) -> str:
        """`type:severity`, as the detail shows it."""
        return f"{self.type}:{self.severity}"


@dataclass(frozen=True, slots=True)
class Action:
    """An action item: its description and who owns it (None when not given)."""

    description: str
    assignee_role: str | None = None


@dataclass(frozen=True, slots=True)
class TagLabels:
    """The labels of one sample; `outside_vocabulary` lists labels that normalisation could not place."""

    topics: tuple[str, ...] = ()
    risks: tuple[Risk, ...] = ()
    actions: tuple[Action, ...] = ()
    outside_vocabulary: tuple[str, ...] = ()
    problem: str | None = field(default=None)
    """Why the reply could not be read (then the labels are empty): it scores as predicting nothing."""


def _text(value: Any, *keys: str) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in keys:
            found = value.get(key)
            if isinstance(found, str):
                return found
    return None


def _list(raw: Mapping[str, Any], key: str) -> list[Any]:
    value = raw.get(key)
    return value if isinstance(value, list) else []


def read_labels(raw: Any) -> TagLabels:
    """Read labels from a parsed object or JSON text, normalising every label; never raises."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw, strict=False)
        except ValueError:
            shown = raw.strip()[:60]
            return TagLabels(problem=f"the reply is not JSON: {shown!r}" if shown else "the reply is empty")
    if not isinstance(raw, Mapping):
        return TagLabels(problem=f"the reply is {type(raw).__name__}, not an object with topics, risks, actions")
    outside: list[str] = []
    topics: list[str] = []
    for entry in _list(raw, "topics"):
        text = _text(entry, "label", "topic", "name")
        if text is None or not text.strip():
            continue
        found = normalise_topic(text)
        if not found.known:
            outside.append(f"topic:{found.label}")
        if found.label not in topics:
            topics.append(found.label)
    risks: list[Risk] = []
    for entry in _list(raw, "risks"):
        kind = _text(entry, "type", "risk", "label")
        if kind is None or not kind.strip():
            continue
        found_type = normalise_risk_type(kind)
        if not found_type.known:
            outside.append(f"risk:{found_type.label}")
        severity_text = _text(entry, "severity") or ""
        found_severity = normalise_severity(severity_text)
        if not found_severity.known:
            outside.append(f"severity:{found_severity.label or '(none)'}")
        risks.append(Risk(found_type.label, found_severity.label or "unknown"))
    actions: list[Action] = []
    for entry in _list(raw, "actions"):
        description = _text(entry, "description", "action", "text")
        if description is None or not description.strip():
            continue
        role = entry.get("assignee_role") if isinstance(entry, Mapping) else None
        actions.append(Action(description.strip(), role if isinstance(role, str) and role.strip() else None))
    return TagLabels(tuple(topics), tuple(risks), tuple(actions), tuple(outside))
