"""`production:` in scoregate.yaml: which Langfuse traces are an experiment's production traffic, and how a dataset
item is read from one.

    production:
      catchup:                        # an experiment: its dataset, prompt and judges
        filter:
          trace_name: production-app
          environment: production
          tags: [podcast]
          prompt: {name: summarization-catchup, label: production}   # or version: 3; default: the experiment's
          window: {last: 7d}          # or since: / until: (ISO 8601)
        mapping:
          input: {title: $.input.title, transcript: $.input.transcript}
          output: $.output
          metadata: {feed_id: $.metadata.feed_id}
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, model_validator

from scoregate.catalog.models import Strict
from scoregate.catalog.production_paths import PathError, parse_path
from scoregate.errors import UsageError

DURATION = re.compile(r"^(\d+)([mhd])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}
_LONGEST_DAYS = 3653  # ten years: a longer `last:` reaches before any trace, or past the calendar's start


class PromptLink(Strict):
    """The prompt the production generations are linked to: one version, the version under a label, or any."""

    name: str | None = Field(default=None, description="Prompt name; default: the experiment's prompt.")
    version: int | None = Field(default=None, ge=1, description="One version.")
    label: str | None = Field(default="production", description="The version under this label (read at fetch time).")

    @model_validator(mode="after")
    def _version_or_label(self) -> PromptLink:
        if self.version is not None and "label" in self.model_fields_set and self.label is not None:
            raise ValueError("give `version:` or `label:`, not both")
        return self


class ProductionWindow(Strict):
    """The time window of the traces: the last duration, or since/until."""

    last: str | None = Field(default=None, description="A duration back from now: `30m`, `24h`, `7d`.")
    since: dt.datetime | None = Field(default=None, description="Start (ISO 8601; naive means UTC).")
    until: dt.datetime | None = Field(default=None, description="End, excluded (ISO 8601); default: now.")

    @model_validator(mode="after")
    def _one_way(self) -> ProductionWindow:
        if self.last is not None and self.since is not None:
            raise ValueError("give `last:` or `since:`, not both")
        matched = DURATION.match(self.last) if self.last is not None else None
        if self.last is not None and matched is None:
            raise ValueError(f"last: {self.last!r} is not a duration; write e.g. 30m, 24h or 7d")
        if matched is not None:
            length = dt.timedelta(**{_UNITS[matched.group(2)]: min(int(matched.group(1)), _LONGEST_DAYS * 1440)})
            if not length:
                raise ValueError(f"last: {self.last!r} is an empty window; write e.g. 30m, 24h or 7d")
            if length > dt.timedelta(days=_LONGEST_DAYS):
                raise ValueError(f"last: {self.last!r} is longer than 10 years; write e.g. 30d, or since: a date")
        if self.since is not None and self.until is not None and _utc(self.since) >= _utc(self.until):
            raise ValueError(
                f"since: {_utc(self.since):%Y-%m-%d %H:%M} UTC is not before until: {_utc(self.until):%Y-%m-%d %H:%M} "
                "UTC, so the window holds no time; swap them or move one"
            )
        return self

    @classmethod
    def from_option(cls, last: str) -> ProductionWindow:
        """Return the window of a `--last` option, or a usage error naming it and what to write."""
        try:
            return cls(last=last)
        except ValidationError as exc:
            reason = str(exc.errors(include_url=False)[0]["msg"]).removeprefix("Value error, ")
            reason = reason.removeprefix(f"last: {last!r} is ")
            raise UsageError(f"--last {last}: {reason}", option="--last") from None

    def bounds(self, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
        """The window as (start, end) in UTC; without `last:` or `since:` it is the last 7 days."""
        end = _utc(self.until) if self.until is not None else now
        if self.since is not None:
            return _utc(self.since), end
        amount, unit = DURATION.match(self.last or "7d").groups()  # type: ignore[union-attr]
        return end - dt.timedelta(**{_UNITS[unit]: int(amount)}), end


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.astimezone(dt.UTC) if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


class ProductionFilter(Strict):
    """What selects an experiment's production traces on Langfuse."""

    trace_name: str | None = Field(default=None, description="The traces' name.")
    environment: str | None = Field(default=None, description="The traces' environment.")
    tags: list[str] = Field(default_factory=list, description="Tags every trace carries (all of them).")
    prompt: PromptLink = Field(default_factory=PromptLink, description="The prompt version the generation uses.")
    window: ProductionWindow = Field(default_factory=ProductionWindow, description="Default: the last 7 days.")


class ProductionMapping(Strict):
    """How a dataset item is read from a trace: a JSONPath per field (`$.input.…`, `$.output…`, `$.metadata.…`)."""

    input: dict[str, str] = Field(min_length=1, description="Item input field → path in the trace.")
    output: str = Field(default="$.output", description="The logged production output (replay compares with it).")
    metadata: dict[str, str] = Field(default_factory=dict, description="Item metadata field → path.")

    def paths(self) -> dict[str, str]:
        """Every path by the field it fills (`input.title`, `output`, `metadata.feed_id`)."""
        return {
            **{f"input.{k}": v for k, v in self.input.items()},
            "output": self.output,
            **{f"metadata.{k}": v for k, v in self.metadata.items()},
        }


class HarvestSettings(Strict):
    """How `scoregate harvest` proposes items from this traffic."""

    near_duplicate: float = Field(
        default=90, ge=0, le=100, description="Similarity (rapidfuzz ratio, 0-100) at which a trace is a duplicate."
    )


class ProductionSpec(Strict):
    """One experiment's production traffic: the filter and the mapping."""

    filter: ProductionFilter = Field(default_factory=ProductionFilter)
    mapping: ProductionMapping
    redact: list[str] = Field(
        default_factory=list, description="Regular expressions of the project's own personal data, masked before disk."
    )
    harvest: HarvestSettings = Field(default_factory=HarvestSettings)

    @model_validator(mode="after")
    def _patterns_compile(self) -> ProductionSpec:
        for pattern in self.redact:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"redact: {pattern!r} is not a regular expression ({exc})") from None
        return self


def yaml_line(path: Path, keys: tuple[str, ...]) -> int | None:
    """The line of the value at `keys` in a YAML file (the deepest key found), or None when unreadable."""
    try:
        node = yaml.compose(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return None
    line = None
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            break
        found = next(((k, v) for k, v in node.value if getattr(k, "value", None) == key), None)
        if found is None:
            break
        line, node = found[0].start_mark.line + 1, found[1]
    return line


def path_problems(spec: ProductionSpec) -> list[tuple[str, str]]:
    """(field, problem) for every mapping path outside the supported JSONPath subset."""
    problems = []
    for field, path in spec.mapping.paths().items():
        try:
            parse_path(path)
        except PathError as exc:
            problems.append((f"mapping.{field}", str(exc)))
    return problems


def input_field_problems(spec: ProductionSpec, schema: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(field, problem) for mapped input fields the dataset's input schema does not declare, and required ones
    left unmapped."""
    if not schema or schema.get("type") != "object":
        return []
    declared = schema.get("properties") or {}
    problems = []
    if schema.get("additionalProperties") is False:
        problems += [
            (f"mapping.input.{name}", f"the dataset's input_schema declares no field {name!r} (declared: "
             f"{', '.join(declared) or 'none'})")
            for name in spec.mapping.input
            if name not in declared
        ]  # fmt: skip
    problems += [
        ("mapping.input", f"the dataset's input_schema requires {name!r}; map it from the trace")
        for name in schema.get("required") or []
        if name not in spec.mapping.input
    ]
    return problems
