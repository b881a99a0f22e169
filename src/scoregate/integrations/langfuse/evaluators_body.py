"""An LLM-judge file as a Langfuse `llm_as_judge` evaluator body, and the marker that finds it again on the server.

The evaluator's name is the file's score key: Langfuse names a server-side judge's score after its evaluator, so
the live score and the one `scoregate run` posts are one metric. The rubric becomes the chat messages (the same
system line the run's judge gets, then the rubric with its `{{variables}}`); each variable is mapped to the trace
or experiment item field it reads (`input.transcript` → source `input`, JSONPath `$.transcript`); the score's type
and range become the output definition; the judge's model (the file's `model:`, else the project's judge model)
is always sent as `modelConfig`. What a Langfuse evaluator cannot hold (further reply fields, the reasoning key)
stays with `scoregate run` and is said in the plan.

The description ends with a marker naming the file and a hash of everything the evaluator sends (its name and
definition): any clone finds its evaluators by it, with no local state, and a changed file is a new evaluator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scoregate.catalog.models import JudgeField, ModelSpec
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.canonical import canonical_hash
from scoregate.scoring.judge import DEFAULT_REASONING
from scoregate.scoring.judge_reply import integral_range, number_text
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec

SYSTEM = "You are a strict, careful evaluator."
DESCRIPTION_MAX = 2000
MARKER = re.compile(r"\[scoregate judge (?P<file>[A-Za-z0-9_.-]+) definition (?P<hash>[0-9a-f]{16})\]\s*$")
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SOURCES = {"output": "output", "input": "input", "expected_output": "expected_output", "metadata": "metadata"}


@dataclass(frozen=True)
class JudgeBody:
    """What one judge file sends: its evaluator body, the definition's hash, and what stays local."""

    file: str
    body: dict[str, Any]
    definition_hash: str
    local_only: tuple[str, ...]
    """What the file declares that the evaluator cannot carry (scored only by `scoregate run`)."""
    scores: tuple[str, ...] = ()
    """The score names it writes when they are not its name (a code evaluator's counters)."""


def marker(file: str, definition_hash: str) -> str:
    """The description's last line: which file an evaluator comes from and which definition it holds."""
    return f"[scoregate judge {file} definition {definition_hash}]"


def read_marker(description: str | None) -> tuple[str, str] | None:
    """(file, definition hash) from an evaluator's description, or None for one scoregate did not make."""
    found = MARKER.search(description or "")
    return (found["file"], found["hash"]) if found else None


def variable_mapping(path: str, variable: str) -> dict[str, Any]:
    """One template variable's mapping: its source and, for a field below it, a JSONPath."""
    head, _, rest = path.partition(".")
    mapping: dict[str, Any] = {"variable": variable, "source": _SOURCES[head]}
    if rest:
        mapping["jsonPath"] = "$." + rest
    return mapping


def _value_instructions(field: JudgeField) -> str:
    if field.data_type == "boolean":
        words = "0 or 1"
    elif field.data_type == "categorical":
        words = "one of " + ", ".join(field.categories or [])
    elif field.range is None:
        words = "a whole number >= 0"
    else:
        kind = "an integer" if integral_range(field) else "a number"
        words = f"{kind} from {number_text(field.range[0])} to {number_text(field.range[1])}"
    return " ".join(part for part in (f"{field.description.strip() or field.key}: {words}.", field.instruction) if part)


def output_definition(spec: LlmJudgeSpec) -> dict[str, Any]:
    """The primary score as Langfuse's output definition (NUMERIC with its range, BOOLEAN or CATEGORICAL)."""
    score = spec.score
    out: dict[str, Any] = {"dataType": score.data_type.upper()}
    if score.data_type == "numeric" and score.range is not None:
        out.update(minValue=score.range[0], maxValue=score.range[1])
    if score.data_type == "categorical":
        out.update(categories=list(score.categories or []), shouldAllowMultipleMatches=False)
    out["scoreReasoningInstructions"] = " ".join((spec.reasoning_prompt or DEFAULT_REASONING).split())
    out["scoreValueInstructions"] = _value_instructions(score)
    return out


def judge_body(file: str, spec: LlmJudgeSpec, model: ModelSpec) -> JudgeBody:
    """The evaluator body of one LLM-judge file, with the marker in its description."""
    rubric = _PLACEHOLDER.sub(lambda m: "{{" + m.group(1) + "}}", spec.prompt).strip()
    used = list(dict.fromkeys(_PLACEHOLDER.findall(spec.prompt)))
    for var in used:
        if var not in spec.variables:  # what `scoregate validate` says of the file, before any request
            raise ScoregateError(
                f"prompt: uses {{{{{var}}}}} but `variables:` has no {var!r}",
                where=f"evaluator {file}",
                hint=f"add `{var}: <path>` under variables, e.g. `input.{var}`",
            )
        if spec.variables[var].partition(".")[0] not in _SOURCES:
            raise ScoregateError(
                f"variables.{var}: reads unknown source {spec.variables[var]!r}",
                where=f"evaluator {file}",
                hint="use output, expected_output, input.<field> or metadata.<field>",
            )
    definition: dict[str, Any] = {
        "type": "llm_as_judge",
        "prompt": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": rubric}],
        "variableMapping": [variable_mapping(spec.variables[v], v) for v in used],
        "modelConfig": {"provider": model.provider, "model": model.model},
        "outputDefinition": output_definition(spec),
    }
    name = spec.score.key
    digest = canonical_hash([name, definition])[:16]
    tail = "\n\n" + marker(file, digest)
    text = " ".join(spec.description.split())[: DESCRIPTION_MAX - len(tail)]
    local = [f"reply field {f.key!r}" for f in spec.extra]
    if spec.reasoning_key:
        local.append(f"reasoning key {spec.reasoning_key!r} (Langfuse keeps the reasoning as the score's comment)")
    if spec.samples > 1:
        local.append(f"samples: {spec.samples} (the server asks once)")
    return JudgeBody(file, {"name": name, "description": text + tail, **definition}, digest, tuple(local))
