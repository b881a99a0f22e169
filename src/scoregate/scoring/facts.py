"""Fact-level recall: one judge call lists the facts of the expected and the produced text with a verdict each.

verdict `both`: in both texts (kept); `expected`: only in the expected text (lost); `got`: only in the
produced text (added; shown, but not in the denominator). score = both / (both + expected) × 100.
No expected text, a failed judge call, an unreadable reply or no expected fact at all: null with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from scoregate.providers.base import CompletionRequest
from scoregate.scoring.base import EvalContext, ModelCallFailed, resolve_path
from scoregate.scoring.judge_reply import find_object
from scoregate.scoring.kinds.fact_recall import FactRecallSpec
from scoregate.store.records import DataType, Score

Verdict = Literal["both", "expected", "got"]
VERDICTS: tuple[Verdict, ...] = ("both", "expected", "got")
VERDICT_TITLES = {"both": "in both", "expected": "expected only (lost)", "got": "got only (added)"}

FACTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["facts"],
    "additionalProperties": False,
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["subject", "predicate", "object", "verdict"],
                "additionalProperties": False,
                "properties": {
                    "subject": {"type": "string"},
                    "predicate": {"type": "string"},
                    "object": {"type": "string"},
                    "verdict": {"type": "string", "enum": list(VERDICTS)},
                },
            },
        }
    },
}

PROMPT = """Compare the meaning of two texts fact by fact.

Extract every fact stated in either text as a subject / predicate / object triple. Give each fact one
verdict:
- "both": the fact is in the EXPECTED text and in the PRODUCED text (wording may differ);
- "expected": the fact is only in the EXPECTED text (it was lost);
- "got": the fact is only in the PRODUCED text (it was added).
List each fact once. Reply with JSON only: {{"facts": [{{"subject": "...", "predicate": "...", "object": "...",
"verdict": "both|expected|got"}}]}}

<expected>
{expected}
</expected>

<produced>
{got}
</produced>"""


@dataclass(frozen=True, slots=True)
class Fact:
    """One semantic fact and where it appears."""

    subject: str
    predicate: str
    object: str
    verdict: Verdict

    def text(self) -> str:
        """`subject predicate object`."""
        return " ".join(p for p in (self.subject, self.predicate, self.object) if p)


def read_facts(reply: Any) -> tuple[list[Fact], str | None]:
    """Read the judge's facts from its reply text or object; (facts, None) or ([], why not)."""
    found = find_object(reply) if isinstance(reply, str) else reply
    if not isinstance(found, Mapping) or not isinstance(found.get("facts"), list):
        shown = str(reply).strip()[:80]
        return [], f"judge reply has no facts list: {shown!r}" if shown else "judge reply is empty"
    facts = []
    for entry in found["facts"]:
        if not isinstance(entry, Mapping):
            continue
        verdict = str(entry.get("verdict", "")).strip().lower()
        if verdict not in VERDICTS:
            continue
        parts = [str(entry.get(k) or "").strip() for k in ("subject", "predicate", "object")]
        if any(parts):
            facts.append(Fact(parts[0], parts[1], parts[2], verdict))
    return facts, None


def fact_score(facts: Sequence[Fact]) -> tuple[float | None, str | None]:
    """both / (both + expected) × 100, or (None, reason) when there is no expected fact."""
    both = sum(f.verdict == "both" for f in facts)
    expected = sum(f.verdict == "expected" for f in facts)
    if both + expected == 0:
        return None, "the judge found no fact of the expected text"
    return 100.0 * both / (both + expected), None


def fact_detail(facts: Sequence[Fact]) -> str:
    """The facts grouped by verdict, as a reader wants them (both, expected only, got only)."""
    both = sum(f.verdict == "both" for f in facts)
    expected = sum(f.verdict == "expected" for f in facts)
    lines = [f"{both} of {both + expected} expected facts kept"]
    for verdict in VERDICTS:
        group = [f for f in facts if f.verdict == verdict]
        lines.append(f"{VERDICT_TITLES[verdict]} ({len(group)}):")
        lines += [f"  - {f.text()}" for f in group] or ["  (none)"]
    return "\n".join(lines)


def text_of(value: Any) -> str | None:
    """A source value as text (JSON for objects); None when empty."""
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if text.strip() else None


class FactRecallEvaluator:
    """Scores how much of the expected text's meaning the produced text keeps, with one judge call."""

    def __init__(self, spec: FactRecallSpec, default_model: str | None) -> None:
        self.name = spec.name
        self.version = spec.version
        self.spec = spec
        self.model = spec.model or default_model

    def score_keys(self) -> list[tuple[str, DataType]]:
        """The score (0-100), then the facts as JSON text."""
        return [(self.spec.key, "numeric"), (self.spec.key + "_facts", "text")]

    def request(self, expected: str, got: str) -> CompletionRequest:
        """The judge request for one pair of texts."""
        return CompletionRequest(
            messages=(
                {"role": "system", "content": "You are a strict, careful evaluator. Reply with JSON only."},
                {"role": "user", "content": PROMPT.format(expected=expected, got=got)},
            ),
            temperature=self.spec.temperature,
            max_tokens=self.spec.max_tokens,
            json_schema=FACTS_SCHEMA,
            schema_name="facts",
        )

    def _missing(self, reason: str) -> list[Score]:
        return [Score.missing(key, data_type, self.name, reason) for key, data_type in self.score_keys()]

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """One judge call; the score with the facts grouped by verdict, or null with the reason."""
        expected = text_of(resolve_path(self.spec.expected_source, ctx))
        if expected is None:
            return self._missing(f"no expected text ({self.spec.expected_source} is empty)")
        got = text_of(resolve_path(self.spec.got_source, ctx)) or ""
        try:
            completion = await ctx.call_model(self.model, self.request(expected, got), f"judge:{self.name}")
        except ModelCallFailed as exc:
            return self._missing(f"judge call failed: {exc}")
        facts, problem = read_facts(completion.text or "")
        if problem is not None:
            cut = " (the reply was cut off at max_tokens)" if completion.finish_reason == "length" else ""
            return self._missing(problem + cut)
        value, reason = fact_score(facts)
        grouped = {v: [asdict(f) for f in facts if f.verdict == v] for v in VERDICTS}
        return [
            Score(self.spec.key, value, "numeric", self.name, comment=fact_detail(facts), reason=reason),
            Score(self.spec.key + "_facts", json.dumps(grouped, ensure_ascii=False), "text", self.name),
        ]
