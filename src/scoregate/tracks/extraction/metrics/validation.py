"""Parsing model output text and validating it against a JSON Schema, with compiled schemas cached by content."""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker, SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from scoregate.errors import ScoregateError
from scoregate.tracks.extraction.metrics.complexity import SchemaComplexity, schema_complexity, schema_fields

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)\r?\n?```$", re.DOTALL)
_CACHE_SIZE = 512


@dataclass(frozen=True, slots=True)
class ParsedOutput:
    """The result of reading one output: the value, or why it is not JSON."""

    ok: bool
    value: Any
    error: str | None = None


@dataclass(frozen=True, slots=True)
class CompiledSchema:
    """A checked schema with its validator, complexity and which leaf paths are required."""

    validator: Validator
    complexity: SchemaComplexity
    required: Mapping[str, bool]

    def errors(self, instance: Any, limit: int) -> list[str]:
        """Return up to `limit` validation messages (`$.path: message`), empty when the instance is valid."""
        messages: list[str] = []
        for error in self.validator.iter_errors(instance):
            messages.append(f"{error.json_path}: {error.message}")
            if len(messages) >= limit:
                break
        return messages


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_output(output: Any, *, strip_code_fences: bool = True) -> ParsedOutput:
    """Parse JSON text (optionally inside a Markdown code fence); a non-string is taken as already parsed."""
    if not isinstance(output, str | bytes):
        return ParsedOutput(ok=True, value=output)
    text = output.decode("utf-8", errors="replace") if isinstance(output, bytes) else output
    text = text.strip()
    if strip_code_fences:
        fenced = _FENCE.match(text)
        if fenced:
            text = fenced.group(1).strip()
    if not text:
        return ParsedOutput(ok=False, value=None, error="empty output")
    try:
        return ParsedOutput(ok=True, value=json.loads(text, parse_constant=_reject_constant))
    except json.JSONDecodeError as exc:
        return ParsedOutput(ok=False, value=None, error=f"line {exc.lineno} column {exc.colno}: {exc.msg}")
    except (ValueError, RecursionError) as exc:
        return ParsedOutput(ok=False, value=None, error=str(exc) or type(exc).__name__)


class _SchemaCache:
    """Compiled schemas keyed by canonical JSON text, with a front cache by object identity."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._by_text: OrderedDict[tuple[str, bool], CompiledSchema] = OrderedDict()
        # Holding the schema object itself keeps its id from being reused while the entry lives.
        self._by_id: dict[tuple[int, bool], tuple[Mapping[str, Any], str, CompiledSchema]] = {}

    def get(self, schema: Mapping[str, Any], check_formats: bool) -> CompiledSchema:
        front = self._by_id.get((id(schema), check_formats))
        if front is not None and front[0] is schema:
            return front[2]
        text = json.dumps(schema, sort_keys=True, default=str)
        key = (text, check_formats)
        compiled = self._by_text.get(key)
        if compiled is None:
            compiled = _compile(schema, check_formats)
            self._by_text[key] = compiled
            if len(self._by_text) > self._size:
                self._by_text.popitem(last=False)
        else:
            self._by_text.move_to_end(key)
        if len(self._by_id) >= self._size:
            self._by_id.clear()
        self._by_id[(id(schema), check_formats)] = (schema, text, compiled)
        return compiled

    def clear(self) -> None:
        self._by_text.clear()
        self._by_id.clear()


def _compile(schema: Mapping[str, Any], check_formats: bool) -> CompiledSchema:
    if not isinstance(schema, Mapping):
        raise ScoregateError(
            f"a JSON Schema must be an object, got {type(schema).__name__}",
            where="json_schema",
            hint="give the item's schema as a JSON object (Draft 7 or later)",
        )
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise ScoregateError(
            f"invalid JSON Schema at {exc.json_path}: {exc.message}",
            where="json_schema",
            hint="fix the item's schema; it must be a valid JSON Schema (Draft 7 or later)",
        ) from exc
    checker = FormatChecker() if check_formats else None
    validator: Validator = cls(schema, format_checker=checker)
    required = {f.path: f.required for f in schema_fields(schema)}
    return CompiledSchema(validator=validator, complexity=schema_complexity(schema), required=required)


_CACHE = _SchemaCache(_CACHE_SIZE)


def compile_schema(schema: Mapping[str, Any], *, check_formats: bool = False) -> CompiledSchema:
    """Return the compiled form of a schema, reusing an earlier compilation of the same content."""
    return _CACHE.get(schema, check_formats)


def clear_schema_cache() -> None:
    """Forget every compiled schema (for tests, or after editing a schema object in place)."""
    _CACHE.clear()
