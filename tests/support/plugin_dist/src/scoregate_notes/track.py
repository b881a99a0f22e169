"""The track `terse`: `kind: terse` counts a reply's words; each run gets a `terse` block with the words per reply,
which a gate may name as `words_per_reply_run`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from scoregate.catalog.evaluators import EvaluatorKind, EvaluatorSpec
from scoregate.catalog.models import Direction
from scoregate.scoring.base import EvalContext, Evaluator
from scoregate.store.records import DataType, Score
from scoregate.store.run_store import RunStore
from scoregate.tracks.base import Track, TrackSettings, measured

KEY = "reply_words"
RUN_KEY = "words_per_reply_run"


class TerseSpec(EvaluatorSpec):
    """An evaluator file of `kind: terse`: no options beyond its name and version."""

    kind: Literal["terse"]

    def score_keys(self) -> list[str]:
        """The words of each reply, then the run's words per reply that the track adds for gates."""
        return [KEY, RUN_KEY]

    def directions(self) -> dict[str, Direction]:
        """Shorter replies are better."""
        return {KEY: "lower", RUN_KEY: "lower", "words_per_reply": "lower"}


class TerseEvaluator:
    """Counts the words of a reply; null with the reason when the reply is not text."""

    def __init__(self, spec: TerseSpec) -> None:
        self.spec, self.name, self.version = spec, spec.name, spec.version

    def score_keys(self) -> list[tuple[str, DataType]]:
        """The one numeric count."""
        return [(KEY, "numeric")]

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """The number of words of the output."""
        if not isinstance(ctx.output, str):
            return [Score.missing(KEY, "numeric", self.name, "the output is not text")]
        return [Score(KEY, float(len(ctx.output.split())), "numeric", self.name)]


def report(
    evaluators: Sequence[Evaluator], store: RunStore, summary: Mapping[str, Any], settings: TrackSettings
) -> dict[str, Any]:
    """`{"terse": block}` for a run with a terse evaluator: all words over all measured replies; else `{}`."""
    if not any(isinstance(evaluator, TerseEvaluator) for evaluator in evaluators):
        return {}
    counts = [s.value for r in store.iter_results() for s in r.scores if s.name == KEY and s.value is not None]
    total = sum(1 for _ in store.iter_results())
    value = sum(float(count) for count in counts) / len(counts) if counts else None
    metric = measured(value, "no reply was measured", samples_measured=len(counts), samples_total=total)
    gate = {**metric, "data_type": "numeric", "mean": value, "n_total": total, "n_measured": len(counts)}
    return {"terse": {"metrics": {"words_per_reply": value}, "gate_metrics": {RUN_KEY: gate}}}


def headline(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The run's words per reply, for MLflow and rankings."""
    return dict((summary.get("terse") or {}).get("metrics") or {})


KIND = EvaluatorKind("terse", TerseSpec, lambda spec, default_judge_model: TerseEvaluator(spec))
TRACK = Track(name="terse", kind=KIND, report=report, title="Terse", headline=headline)
