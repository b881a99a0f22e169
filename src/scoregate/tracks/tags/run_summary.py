"""Run-level tags aggregates for summary.json: micro P/R/F1 with CIs by resampling samples, and coverage.

`tags_track_report` is the tags track's hook (see scoregate.tracks.base): it re-scores each stored result
(deterministic and fast) and returns `{"tags": report}`, or `{}` when the run has no tags evaluator. The
report's `gate_metrics` (`<metric>_micro`) are what the shipped gates read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scoregate.scoring.base import EvalContext, Evaluator
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore
from scoregate.tracks.base import ItemLedger, TrackSettings, measured
from scoregate.tracks.tags.kind import TagsEvaluator
from scoregate.tracks.tags.metrics import METRIC_KEYS, Counts, micro_metrics, read_labels

MICRO_SUFFIX = "_micro"
GATE_METRIC_KEYS: tuple[str, ...] = tuple(k + MICRO_SUFFIX for k in METRIC_KEYS)
"""Names a gate can use for the tags track's micro values (e.g. `topic_f1_micro`)."""


class TagsRunAggregator:
    """Folds stored results into the counts the micro metrics and the coverage block need."""

    def __init__(self, evaluator: TagsEvaluator) -> None:
        self.evaluator = evaluator
        self.ledger = ItemLedger()
        self.samples: list[dict[str, Counts]] = []
        self.with_gold = 0
        self.with_kind: Counter[str] = Counter()
        self.outside: Counter[str] = Counter()
        self.unreadable_replies = 0

    def add(self, result: ItemResult) -> None:
        """Count one stored result: a failed call, an item without gold, or a scored sample."""
        ctx = EvalContext(result.item_id, result.input, None, result.expected_output, result.metadata, _no_call)
        gold = self.evaluator.gold(ctx)
        if gold is not None:
            self.with_gold += 1
            labels = read_labels(gold)
            for kind, values in (("topics", labels.topics), ("risks", labels.risks), ("actions", labels.actions)):
                self.with_kind[kind] += bool(values)
        if self.ledger.call_failed(result):
            return
        output = result.raw_output if result.raw_output is not None else result.output
        scored = self.evaluator.measure(output, gold)
        if isinstance(scored, str):
            self.ledger.not_scored(result.item_id, scored)
            return
        self.samples.append(scored.counts)
        self.outside.update(scored.outside_vocabulary)
        self.unreadable_replies += scored.problem is not None

    def result(self, settings: TrackSettings) -> dict[str, Any]:
        """Return the run-level tags report (JSON-ready)."""
        total = self.ledger.items
        micro = micro_metrics(
            self.samples, confidence=settings.confidence, resamples=settings.resamples, seed=settings.seed
        )
        skipped_why = self._skip_reason()
        metrics = {}
        gate = {}
        for key, m in micro.items():
            reason = m.reason if self.samples else skipped_why
            metrics[key] = measured(
                m.value, reason, samples_measured=m.samples_measured, samples_total=total,
                ci_low=m.ci_low, ci_high=m.ci_high,
            )  # fmt: skip
            gate[key + MICRO_SUFFIX] = {
                **metrics[key],
                "data_type": "numeric",
                "aggregation": "micro",
                "n_total": total,
                "n_measured": m.samples_measured,
                "coverage": m.samples_measured / total if total else None,
                "mean": m.value,
                "ci_low": m.ci_low,
                "ci_high": m.ci_high,
                "confidence": settings.confidence,
                "null_reasons": {reason: 1} if m.value is None and reason else {},
            }
        return {
            "evaluator": f"{self.evaluator.name}@{self.evaluator.version}",
            "items": total,
            "scored": len(self.samples),
            "not_scored": {
                "model_call_failed": self.ledger.call_failure_count,
                "no_gold_labels": self.ledger.unscored_count,
            },
            "unscored": self.ledger.unscored,
            "failed_calls": self.ledger.call_failures,
            "unreadable_replies": self.unreadable_replies,
            "aggregation": (
                "micro: TP/FP/FN summed over samples, then P/R/F1; CI = percentile bootstrap over samples "
                f"({settings.resamples} resamples, each recomputing the micro value)"
            ),
            "action_threshold": self.evaluator.spec.action_threshold,
            "metrics": metrics,
            "coverage": {
                "samples_total": total,
                "samples_with_gold_labels": self.with_gold,
                "samples_with_topics": self.with_kind["topics"],
                "samples_with_risks": self.with_kind["risks"],
                "samples_with_actions": self.with_kind["actions"],
                "gold_label_coverage": self.with_gold / total if total else None,
            },
            "outside_vocabulary": dict(self.outside.most_common()),
            "gate_metrics": gate,
        }

    def _skip_reason(self) -> str:
        if not self.ledger.items:
            return "the run has no items"
        if self.ledger.call_failure_count == self.ledger.items:
            return "every model call failed"
        return "no sample could be scored (no gold labels)"


def aggregate_tags(evaluator: TagsEvaluator, results: Iterable[ItemResult], settings: TrackSettings) -> dict[str, Any]:
    """Return the run-level tags report of stored results."""
    aggregator = TagsRunAggregator(evaluator)
    for result in results:
        aggregator.add(result)
    return aggregator.result(settings)


def tags_track_report(
    evaluators: Sequence[Evaluator], store: RunStore, summary: Mapping[str, Any], settings: TrackSettings
) -> dict[str, Any]:
    """Return `{"tags": report}` for a run with a tags evaluator (the first one), else `{}`."""
    tagger = next((e for e in evaluators if isinstance(e, TagsEvaluator)), None)
    if tagger is None:
        return {}
    return {"tags": aggregate_tags(tagger, store.iter_results(), settings)}


async def _no_call(*_: Any) -> Any:
    raise RuntimeError("the tags evaluator makes no model call")
