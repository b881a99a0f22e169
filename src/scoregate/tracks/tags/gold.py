"""Gold-label files `<dataset>/goldens/<sample_id>_gold.json`: their JSON Schema and `scoregate gold validate`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from scoregate.errors import ScoregateError
from scoregate.support.json_errors import json_position, json_problem
from scoregate.tracks.tags.metrics.vocabulary import (
    ASSIGNEE_ROLES,
    RISK_SEVERITIES,
    SEVERITIES,
    TOPIC_CATEGORIES,
    TOPICS,
)

GOLD_SUFFIX = "_gold.json"
SCHEMA_FILE = "gold-labels.schema.json"

GOLD_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "scoregate gold labels (topics, risks, actions of one sample)",
    "type": "object",
    "required": ["schema_version", "sample_id", "dataset", "annotator", "annotated_at", "topics", "risks", "actions"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"const": 1},
        "sample_id": {"type": "string", "minLength": 1, "description": "Must equal the file name before _gold.json."},
        "dataset": {"type": "string", "minLength": 1},
        "annotator": {"type": "string", "minLength": 1},
        "annotated_at": {"type": "string", "format": "date-time"},
        "topics": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["label"],
                "additionalProperties": False,
                "properties": {
                    "label": {"type": "string", "description": "A topic of the controlled vocabulary."},
                    "span": {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 2},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "notes": {"type": "string"},
                },
            },
        },
        "risks": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "severity"],
                "additionalProperties": False,
                "properties": {
                    "type": {"type": "string", "description": "A risk type; its severity must be one it allows."},
                    "severity": {"enum": list(SEVERITIES)},
                    "segment_ids": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                    "evidence": {"type": "string"},
                    "notes": {"type": "string"},
                },
            },
        },
        "actions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["description"],
                "additionalProperties": False,
                "properties": {
                    "description": {"type": "string", "minLength": 1},
                    "assignee_role": {"enum": list(ASSIGNEE_ROLES)},
                    "segment_ids": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                    "verbatim": {"type": "string"},
                },
            },
        },
    },
}
"""The JSON Schema of a gold file (also written to schemas/gold-labels.schema.json)."""

_VALIDATOR = jsonschema.Draft202012Validator(GOLD_SCHEMA)


@dataclass(frozen=True, slots=True)
class GoldViolation:
    """One problem of one gold file: where (file, field) and what."""

    path: Path
    field: str
    message: str

    def render(self) -> str:
        """`file: field: message`."""
        return f"{self.path}: {self.field}: {self.message}"


def _field(parts: Any) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(file)"


def sample_id_of(path: Path) -> str:
    """The sample id a gold file's name promises (`ES2002a_gold.json` → `ES2002a`)."""
    return path.name.removesuffix(GOLD_SUFFIX)


def check_gold(path: Path, data: Any) -> list[GoldViolation]:
    """Return every violation of one parsed gold file: schema, vocabulary, severities, sample id."""
    found: list[GoldViolation] = []
    for err in sorted(_VALIDATOR.iter_errors(data), key=lambda e: list(e.absolute_path)):
        where = list(err.absolute_path)
        if err.validator == "required":
            missing = err.message.split("'")[1] if "'" in err.message else err.message
            where.append(missing)
            found.append(GoldViolation(path, _field(where), "required field is missing"))
        elif err.validator == "additionalProperties":
            found.append(GoldViolation(path, _field(where), err.message + " (remove it or fix its spelling)"))
        else:
            found.append(GoldViolation(path, _field(where), err.message))
    if not isinstance(data, dict):
        return found
    if not path.name.endswith(GOLD_SUFFIX):
        found.append(GoldViolation(path, "(file name)", f"a gold file's name must end in {GOLD_SUFFIX}"))
    elif isinstance(data.get("sample_id"), str) and data["sample_id"] != sample_id_of(path):
        found.append(
            GoldViolation(
                path, "sample_id", f"is {data['sample_id']!r} but the file is named for {sample_id_of(path)!r}"
            )
        )
    for i, topic in enumerate(data.get("topics") or []):
        label = topic.get("label") if isinstance(topic, dict) else None
        if isinstance(label, str) and label not in TOPICS:
            found.append(
                GoldViolation(path, f"topics[{i}].label", f"{label!r} is not in the topic vocabulary ({_vocab()})")
            )
    for i, risk in enumerate(data.get("risks") or []):
        if not isinstance(risk, dict) or not isinstance(risk.get("type"), str):
            continue
        allowed = RISK_SEVERITIES.get(risk["type"])
        if allowed is None:
            found.append(
                GoldViolation(
                    path,
                    f"risks[{i}].type",
                    f"unknown risk type {risk['type']!r}; use one of {', '.join(RISK_SEVERITIES)}",
                )
            )
        elif risk.get("severity") in SEVERITIES and risk["severity"] not in allowed:
            found.append(
                GoldViolation(
                    path,
                    f"risks[{i}].severity",
                    f"{risk['severity']!r} is not allowed for {risk['type']}; use {', '.join(allowed)}",
                )
            )
    return found


def _vocab() -> str:
    return "; ".join(f"{cat}: {', '.join(topics)}" for cat, topics in TOPIC_CATEGORIES.items())


def read_gold(path: Path) -> tuple[dict[str, Any] | None, list[GoldViolation]]:
    """Read and check one gold file; the data is None when it is not a JSON object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        line, _ = json_position(exc)
        return None, [GoldViolation(path, f"line {line}", json_problem(exc, unit="file"))]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [GoldViolation(path, "(file)", f"cannot read: {exc}")]
    violations = check_gold(path, data)
    return (data if isinstance(data, dict) else None), violations


def gold_files(target: Path) -> Iterator[Path]:
    """The gold files at `target`: the file itself, or every `*_gold.json` below a folder."""
    if target.is_file():
        yield target
        return
    if not target.is_dir():
        raise ScoregateError(f"no such file or folder: {target}", hint="give a gold file or a folder holding them")
    yield from sorted(target.rglob(f"*{GOLD_SUFFIX}"))


@dataclass(frozen=True, slots=True)
class GoldReport:
    """What `gold validate` found: files checked and every violation."""

    files: int
    violations: list[GoldViolation]


def validate_gold(target: Path) -> GoldReport:
    """Check a gold file or every gold file in a folder; raise when a folder holds none."""
    files = list(gold_files(target))
    if not files:
        raise ScoregateError(f"no *{GOLD_SUFFIX} files in {target}", hint="gold files live in <dataset>/goldens/")
    violations = [v for path in files for v in read_gold(path)[1]]
    return GoldReport(len(files), violations)
