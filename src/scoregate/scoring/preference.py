"""Pairwise preference between two runs' outputs, judged in both orders to cancel position bias.

For every item both runs produced, the preference judge (`ev_preference_v1` by default: variables
`summary_a`, `summary_b`, plus whatever else it reads from the item; primary score `preference_winner`
"A"/"B") is asked twice: once with run A's output shown first, once with run B's shown first. When
both orders name the same run, that run wins the item; when they disagree, the item is a tie (the
judge followed the position, not the content). A category other than A or B (e.g. "tie") is a tie.
Identical outputs are a tie without a judge call. When either order could not be measured (a failed
call, an unparsable or out-of-range reply), the item's outcome is null with the reason and is left
out of the win rate, which `preference_win_rate` computes with its CI (ties count half).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from scoregate.analysis.paired import WinRate, preference_win_rate
from scoregate.calls.caller import ModelCaller
from scoregate.errors import ScoregateError
from scoregate.providers.base import Completion, CompletionRequest
from scoregate.scoring.base import EvalContext
from scoregate.scoring.judge import LlmJudge
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec
from scoregate.store.records import CallRecord, ItemResult, Score

FIRST_VARIABLE = "summary_a"
SECOND_VARIABLE = "summary_b"
WINNER_KEY = "preference_winner"
STRENGTH_KEY = "preference_strength"
DEFAULT_EVALUATOR = "ev_preference_v1"
TOP_REASONS = 5

Outcome = Literal["A", "B", "tie"]


@dataclass(frozen=True)
class PairJudgement:
    """One item judged in both orders; outcomes name runs ("A" = run A preferred), not positions."""

    item_id: str
    outcome: Outcome | None
    a_shown_first: Outcome | None
    b_shown_first: Outcome | None
    strength: float | None = None
    rationale: str | None = None
    reason: str | None = None
    """Why `outcome` is None, or a note on how it was reached (identical outputs)."""


@dataclass
class PreferenceResult:
    """Run B's win rate over run A by the pairwise judge, with the evidence behind it."""

    evaluator: str
    evaluator_version: int
    judge_model: str
    items: int
    judged: int
    orders_agreed: int
    """Pairs (judged, outputs not identical) where both orders named the same run."""
    first_shown_wins: int
    """Orders in which the output shown first won; near half of `decisive_orders` means little position bias."""
    decisive_orders: int
    win_rate: WinRate
    pairs: list[PairJudgement] = field(default_factory=list)
    null_reasons: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    failed_calls: int = 0
    tokens_in: int | None = 0
    tokens_out: int | None = 0
    cost_usd: float | None = 0.0

    @property
    def coverage(self) -> float | None:
        """Judged items / shared items."""
        return self.judged / self.items if self.items else None

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        data = asdict(self)
        data["coverage"] = self.coverage
        return data


def check_preference_spec(spec: LlmJudgeSpec) -> None:
    """Raise a user error unless `spec` can judge a pair: both summary variables and an A/B winner field."""
    where = f"evaluator {spec.name}"
    missing = [v for v in (FIRST_VARIABLE, SECOND_VARIABLE) if v not in spec.variables]
    if missing:
        raise ScoregateError(
            f"a pairwise judge needs the variables {FIRST_VARIABLE} and {SECOND_VARIABLE}; "
            f"missing: {', '.join(missing)}",
            where=where,
            hint=f"declare e.g. `{FIRST_VARIABLE}: input.{FIRST_VARIABLE}` under variables and use it in the prompt",
        )
    winner = _winner_field(spec)
    categories = {c.lower() for c in winner.categories or []}
    if winner.data_type != "categorical" or not {"a", "b"} <= categories:
        raise ScoregateError(
            f"the winner field {winner.key!r} must be categorical with the categories A and B",
            where=where,
        )


def _winner_field(spec: LlmJudgeSpec) -> Any:
    return next((f for f in [spec.score, *spec.extra] if f.key == WINNER_KEY), spec.score)


def _set_path(roots: dict[str, Any], path: str, value: Any) -> None:
    """Put `value` where `resolve_path(path)` will read it, copying the dicts on the way."""
    head, _, rest = path.partition(".")
    if not rest:
        roots[head] = value
        return
    parts = rest.split(".")
    node = roots[head] = dict(roots[head]) if isinstance(roots.get(head), dict) else {}
    for part in parts[:-1]:
        node[part] = dict(node[part]) if isinstance(node.get(part), dict) else {}
        node = node[part]
    node[parts[-1]] = value


def pair_context(spec: LlmJudgeSpec, item: ItemResult, first: Any, second: Any, call_model: Any) -> EvalContext:
    """Return the judge's view of one item with `first` as summary_a and `second` as summary_b."""
    inferred = item.metadata.get("inferred_input") or {}
    roots: dict[str, Any] = {
        "input": {**item.input, **inferred},
        "output": None,
        "expected_output": item.expected_output,
        "metadata": dict(item.metadata),
    }
    _set_path(roots, spec.variables[FIRST_VARIABLE], first)
    _set_path(roots, spec.variables[SECOND_VARIABLE], second)
    return EvalContext(
        item_id=item.item_id,
        input=roots["input"],
        output=roots["output"],
        expected_output=roots["expected_output"],
        metadata=roots["metadata"],
        call_model=call_model,
    )


def _run_outcome(shown_first: Outcome, value: Any) -> Outcome:
    """Map the judge's positional answer ("A" = the summary shown first) to the run it names."""
    shown_second: Outcome = "B" if shown_first == "A" else "A"
    answer = str(value).strip().lower()
    return shown_first if answer == "a" else shown_second if answer == "b" else "tie"


def _by_name(scores: list[Score]) -> dict[str, Score]:
    return {s.name: s for s in scores}


class _Judging:
    """Judges pairs with one LlmJudge and keeps every call's telemetry."""

    def __init__(self, judge: LlmJudge, caller: ModelCaller, concurrency: int) -> None:
        self.judge = judge
        self.winner_key = _winner_field(judge.spec).key
        self.caller = caller
        self.records: list[CallRecord] = []
        self.limit = asyncio.Semaphore(concurrency)

    async def _call(self, name: str | None, request: CompletionRequest, purpose: str) -> Completion:
        return await self.caller.call(name, request, purpose, self.records)

    async def _order(self, item: ItemResult, first: Any, second: Any) -> dict[str, Score]:
        ctx = pair_context(self.judge.spec, item, first, second, self._call)
        return _by_name(await self.judge.evaluate(ctx))

    async def pair(self, a: ItemResult, b: ItemResult) -> PairJudgement:
        """Judge one item in both orders and combine the two answers."""
        if a.error is not None or b.error is not None:
            failed = "A" if a.error is not None else "B"
            return PairJudgement(b.item_id, None, None, None, reason=f"run {failed} has no output for this item")
        if a.output == b.output:
            return PairJudgement(b.item_id, "tie", None, None, reason="identical outputs: a tie without a judge call")
        async with self.limit:
            a_first, b_first = await asyncio.gather(
                self._order(b, a.output, b.output), self._order(b, b.output, a.output)
            )
        orders: list[tuple[str, Outcome, dict[str, Score]]] = [("A", "A", a_first), ("B", "B", b_first)]
        outcomes: list[Outcome | None] = []
        for label, shown_first, scores in orders:
            winner = scores.get(self.winner_key)
            if winner is None or winner.value is None:
                why = winner.reason if winner is not None else "no winner in the reply"
                return PairJudgement(b.item_id, None, None, None, reason=f"with run {label} shown first: {why}")
            outcomes.append(_run_outcome(shown_first, winner.value))
        first, second = outcomes
        agreed = first == second
        strengths = [s[STRENGTH_KEY].value for _, _, s in orders if STRENGTH_KEY in s]
        numbers = [float(v) for v in strengths if isinstance(v, int | float)]
        rationale = " | ".join(
            f"run {label} first: {scores[self.winner_key].comment}"
            for label, _, scores in orders
            if scores[self.winner_key].comment
        )
        return PairJudgement(
            b.item_id,
            first if agreed else "tie",
            first,
            second,
            strength=sum(numbers) / len(numbers) if agreed and len(numbers) == 2 else None,
            rationale=rationale or None,
            reason=None if agreed else "the two orders disagree (position bias): a tie",
        )


async def judge_pairs(
    judge: LlmJudge,
    pairs: Iterable[tuple[ItemResult, ItemResult]],
    caller: ModelCaller,
    *,
    concurrency: int = 4,
    confidence: float = 0.95,
) -> PreferenceResult:
    """Judge each (run A result, run B result) pair of the same item in both orders; return B's win rate."""
    check_preference_spec(judge.spec)
    judging = _Judging(judge, caller, concurrency)
    pairs = list(pairs)
    judged = list(await asyncio.gather(*(judging.pair(a, b) for a, b in pairs)))
    return _result(judge, judged, judging.records, confidence)


def _result(
    judge: LlmJudge, pairs: Sequence[PairJudgement], records: list[CallRecord], confidence: float
) -> PreferenceResult:
    outcomes = [p.outcome for p in pairs if p.outcome is not None]
    compared = [p for p in pairs if p.a_shown_first is not None and p.b_shown_first is not None]
    first_shown = [p.a_shown_first == "A" for p in compared if p.a_shown_first != "tie"]
    first_shown += [p.b_shown_first == "B" for p in compared if p.b_shown_first != "tie"]
    ok = [r for r in records if r.error is None]
    unknown_tokens = any(r.tokens_in is None or r.tokens_out is None for r in ok)
    return PreferenceResult(
        evaluator=judge.name,
        evaluator_version=judge.version,
        judge_model=str(judge.model),
        items=len(pairs),
        judged=len(outcomes),
        orders_agreed=sum(p.a_shown_first == p.b_shown_first for p in compared),
        first_shown_wins=sum(first_shown),
        decisive_orders=len(first_shown),
        win_rate=preference_win_rate(outcomes, confidence=confidence),
        pairs=list(pairs),
        null_reasons=dict(Counter(p.reason or "" for p in pairs if p.outcome is None).most_common(TOP_REASONS)),
        calls=len(records),
        failed_calls=len(records) - len(ok),
        tokens_in=None if unknown_tokens else sum(r.tokens_in or 0 for r in ok),
        tokens_out=None if unknown_tokens else sum(r.tokens_out or 0 for r in ok),
        cost_usd=None if any(r.cost_usd is None for r in ok) else sum(r.cost_usd or 0.0 for r in ok),
    )
