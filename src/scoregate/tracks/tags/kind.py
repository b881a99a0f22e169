"""`kind: tags`: score a reply's topics, risks and actions against the item's gold labels.

Per item: precision / recall / F1 of topics, risks (type only, type + severity, severity-weighted) and
actions, the count of labels outside the vocabulary, and `tags_detail` (JSON: predicted vs gold topics,
risk matches, action matches with similarity). An item without gold labels is not scored: every key is
null with that reason. A reply that is not JSON scores as predicting nothing (recall 0, precision null).
The run-level micro values with CIs are in summary.json under `tags` (see scoregate.tracks.tags.run_summary).
"""

from __future__ import annotations

import json
from typing import Any

from scoregate.scoring.base import EvalContext, resolve_path
from scoregate.store.records import DataType, Score
from scoregate.tracks.tags.metrics import METRIC_KEYS, SampleTags, TagLabels, read_labels, score_sample
from scoregate.tracks.tags.spec import TagsSpec

OUTSIDE_KEY = "labels_outside_vocabulary"
DETAIL_KEY = "tags_detail"


class TagsEvaluator:
    """Scores semantic-tags replies against gold labels (deterministic, no model call)."""

    scores_unparsed_output = True
    """Read by the item pipeline: give this evaluator the raw reply when it is not valid JSON."""

    def __init__(self, spec: TagsSpec) -> None:
        self.name = spec.name
        self.version = spec.version
        self.spec = spec

    def score_keys(self) -> list[tuple[str, DataType]]:
        """Every per-sample metric, the outside-vocabulary count, then the detail text."""
        return [*((k, "numeric") for k in METRIC_KEYS), (OUTSIDE_KEY, "numeric"), (DETAIL_KEY, "text")]

    def gold(self, ctx: EvalContext) -> Any:
        """The item's gold labels (as the evaluator file's `gold_source` says), or None."""
        return resolve_path(self.spec.gold_source, ctx)

    def measure(self, output: Any, gold: Any) -> SampleTags | str:
        """Score one output against gold labels; return the reason instead when there is no usable gold."""
        if gold is None:
            return f"no gold labels for this sample ({self.spec.gold_source} is empty)"
        gold_labels = read_labels(gold)
        if gold_labels.problem is not None:
            return f"the gold labels cannot be read: {gold_labels.problem}"
        predicted = output if isinstance(output, TagLabels) else read_labels(output)
        return score_sample(predicted, gold_labels, threshold=self.spec.action_threshold)

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """Return one score per key (see `score`)."""
        return self.score(ctx)

    def score(self, ctx: EvalContext) -> list[Score]:
        """Return one score per key; all null with the reason when the item has no gold labels."""
        result = self.measure(ctx.output, self.gold(ctx))
        if isinstance(result, str):
            return [Score.missing(key, data_type, self.name, result) for key, data_type in self.score_keys()]
        scores = [
            Score(key, result.values[key], "numeric", self.name, reason=result.reasons.get(key)) for key in METRIC_KEYS
        ]
        outside = result.outside_vocabulary
        scores.append(Score(OUTSIDE_KEY, len(outside), "numeric", self.name, comment=", ".join(outside) or None))
        scores.append(Score(DETAIL_KEY, json.dumps(result.detail(), ensure_ascii=False), "text", self.name))
        if result.problem is not None:
            scores[0].comment = result.problem
        return scores
