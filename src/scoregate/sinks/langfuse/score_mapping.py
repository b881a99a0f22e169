"""Stored scores as Langfuse scores: item scores under their exact keys, run aggregates and gate verdicts.

Measured or null holds here too: a null score is not posted under its key (Langfuse has no null and
a 0 would lie); each item instead gets `task_error` (0/1) and, when any score is null, one
`unmeasured` text score naming each missing key and why. A measured but empty text score is sent as
`(empty)` with metadata `empty: true` (Langfuse takes TEXT values of 1 to 500 characters).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from scoregate.store.records import ItemResult, Score
from scoregate.store.stop_record import stop_line
from scoregate.store.vocabulary import LANGFUSE_RUN_METRICS, derived_key

if TYPE_CHECKING:
    from scoregate.store.record import RunSummary, ScoreStats
    from scoregate.store.sections import CorrectedStats

LangfuseType = Literal["NUMERIC", "BOOLEAN", "CATEGORICAL", "TEXT"]
TASK_ERROR = "task_error"
UNMEASURED = "unmeasured"
TEXT_LIMIT = 500  # Langfuse accepts TEXT score values of 1 to 500 characters
EMPTY_TEXT = "(empty)"


@dataclass(frozen=True)
class ScorePost:
    """One score as it is sent: name, value, Langfuse data type, comment and metadata."""

    name: str
    value: float | str
    data_type: LangfuseType
    comment: str | None = None
    metadata: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        """The score as plain data (to fingerprint what was sent)."""
        return {"name": self.name, "value": self.value, "type": self.data_type, "comment": self.comment,
                "metadata": self.metadata}  # fmt: skip


def _clip(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def _convert(score: Score) -> ScorePost | str:
    """Return the score to post, or why it cannot be posted (then it counts as unmeasured)."""
    value = score.value
    metadata: dict[str, Any] = {"evaluator": score.evaluator}
    if score.spread is not None:
        metadata["spread"] = score.spread
    if score.data_type == "boolean":
        return ScorePost(score.name, 1.0 if value else 0.0, "BOOLEAN", score.comment, metadata)
    if score.data_type == "numeric":
        if isinstance(value, str) or not math.isfinite(float(value)):  # type: ignore[arg-type]
            return f"not a finite number: {value!r}"
        return ScorePost(score.name, float(value), "NUMERIC", score.comment, metadata)  # type: ignore[arg-type]
    text = str(value)
    if score.data_type == "categorical":
        return ScorePost(score.name, text, "CATEGORICAL", score.comment, metadata)
    if not text.strip():  # measured and empty (e.g. no section missing); Langfuse takes no empty TEXT value
        return ScorePost(score.name, EMPTY_TEXT, "TEXT", score.comment, {**metadata, "empty": True})
    if len(text) > TEXT_LIMIT:
        metadata["truncated_from"] = len(text)
    return ScorePost(score.name, _clip(text), "TEXT", score.comment, metadata)


def item_scores(result: ItemResult) -> list[ScorePost]:
    """Return every score of one item to post: its measured scores, `task_error` and `unmeasured`."""
    posts: list[ScorePost] = []
    missing: dict[str, str] = {}
    for score in result.scores:
        converted = _convert(score) if score.value is not None else score.reason or "not measured"
        if isinstance(converted, ScorePost):
            posts.append(converted)
        else:
            missing[score.name] = converted
    posts.append(
        ScorePost(TASK_ERROR, 1.0 if result.error else 0.0, "BOOLEAN", result.error, {"item_id": result.item_id})
    )
    if missing:
        listing = "; ".join(f"{key}: {why}" for key, why in missing.items())
        posts.append(ScorePost(UNMEASURED, _clip(listing), "TEXT", None, {"reasons": missing}))
    return posts


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _corrected_post(key: str, corrected: CorrectedStats, value: float, raw_mean: float) -> ScorePost:
    """`<key>_corrected_mean`: the bias-corrected mean, its interval and the raw mean in the comment."""
    level = round(100 * (corrected.confidence or 0.95))
    how = f"{corrected.method_name or corrected.method}, {corrected.n_labels} labels"
    if corrected.human_key:
        how += f" vs {corrected.human_key}"
    comment = (
        f"bias-corrected by the judge's calibration set ({how}), {level}% CI "
        f"[{corrected.ci_low}, {corrected.ci_high}]; raw mean {raw_mean:g}"
    )
    return ScorePost(derived_key(key, "corrected_mean"), value, "NUMERIC", comment, corrected.to_dict())


def _aggregate_posts(key: str, stats: ScoreStats) -> list[ScorePost]:
    coverage = _number(stats.coverage)
    measured = f"{stats.n_measured}/{stats.n_total} measured"
    posts = []
    mean = _number(stats.mean)
    if mean is not None:
        low, high = stats.ci_low, stats.ci_high
        confidence = 0.95 if stats.confidence is None else stats.confidence
        ci = f", {round(100 * confidence)}% CI [{low}, {high}]" if low is not None else ""
        detail = {k: getattr(stats, k) for k in ("median", "std", "ci_low", "ci_high", "min", "max", "n_measured")}
        corrected = stats.corrected
        null = f"; corrected mean: null ({corrected.reason})" if corrected and corrected.value is None else ""
        posts.append(ScorePost(derived_key(key, "mean"), mean, "NUMERIC", measured + ci + null, detail))
        if corrected is not None and corrected.value is not None:
            posts.append(_corrected_post(key, corrected, float(corrected.value), mean))
    if coverage is not None:
        reasons = stats.null_reasons
        why = "; ".join(f"{reason} ({count})" for reason, count in reasons.items())
        comment = measured + (f"; null: {why}" if why else "")
        posts.append(ScorePost(derived_key(key, "coverage"), coverage, "NUMERIC", comment))
    return posts


def run_scores(summary: RunSummary, mlflow_run_id: str | None) -> list[ScorePost]:
    """Return the run-level scores: per-key mean and coverage, run metrics, gate statuses, verdict, MLflow id."""
    from scoregate.analysis.slices import slice_score_rows

    posts = [p for key, stats in summary.scores.items() for p in _aggregate_posts(key, stats)]
    for key in LANGFUSE_RUN_METRICS:
        value = _number(summary.run_metrics.value(key))
        if value is not None:
            posts.append(ScorePost(key, value, "NUMERIC"))
    for gate in summary.gates:
        detail = {k: getattr(gate, k) for k in ("metric", "stat", "op", "threshold", "observed", "coverage")}
        comment = f"{gate.verdict_words()}: {gate.detail}" if gate.quarantined else gate.detail  # never a plain pass
        if gate.quarantined:
            detail.update(quarantined=gate.quarantined, quarantined_breaking=gate.quarantined_breaking or [])
        posts.append(ScorePost(f"gate.{gate.name}", str(gate.status), "CATEGORICAL", comment, detail))
    slice_gates = [gate.to_dict() for gate in summary.gates if gate.slices]
    posts += [
        ScorePost(name, status, "CATEGORICAL", why, meta) for name, status, why, meta in slice_score_rows(slice_gates)
    ]
    posts.append(ScorePost("verdict", str(summary.verdict), "CATEGORICAL"))
    posts += validity_posts(summary)
    posts += stop_early_posts(summary)
    posts += cascade_posts(summary)
    if mlflow_run_id:
        posts.append(ScorePost("mlflow_run_id", mlflow_run_id, "TEXT", "the MLflow run mirroring this run"))
    return posts


def validity_posts(summary: RunSummary) -> list[ScorePost]:
    """The run's `run_valid` score when it was invalidated (`scoregate runs invalidate`): reason in the metadata."""
    if summary.valid is not False:
        return []
    meta = {"invalid_reason": summary.invalid_reason, "invalidated_at": summary.invalidated_at}
    meta["superseded_by"] = summary.superseded_by
    return [ScorePost("run_valid", "invalid", "CATEGORICAL", str(summary.invalid_reason), meta)]


def stop_early_posts(summary: RunSummary) -> list[ScorePost]:
    """A stop-early run's `stop_early` score: its verdict, "stopped at n of N" and the bounds, the rule in metadata."""
    block = summary.stop_early
    if block is None:
        return []
    keys = ("progress", "items_run", "items_total", "paired_differences", "lower", "upper", "mean_difference",
            "stop_reason", "against", "gate", "metric")  # fmt: skip
    meta = {**{k: getattr(block, k) for k in keys}, "rule": block.rule.to_dict()}
    return [ScorePost("stop_early", str(block.verdict), "CATEGORICAL", _clip(stop_line(block)), meta)]


CASCADE_SCORES = ("guaranteed_level", "share_kept", "cost_saved_usd")
"""Each cascade judge's run scores, `cascade.<evaluator>.<figure>`; the null ones' reasons in `.null`."""


def cascade_posts(summary: RunSummary) -> list[ScorePost]:
    """Per cascade judge: its guaranteed level, the share its first judge kept and the cost saved, as NUMERIC run
    scores when measured, and one TEXT score `cascade.<evaluator>.null` saying why the others are null."""
    posts = []
    for name, block in (summary.cascade or {}).items():
        meta = block.to_dict()
        comments = {
            "guaranteed_level": f"{block.guarantee} ({block.calibration_labels} labels)",
            "share_kept": f"the first judge {block.first_model} kept {block.kept} of {block.items} items",
            "cost_saved_usd": f"{block.cost_saved_share or 0:.0%} of the strong judge alone, from the run's calls",
        }
        null: dict[str, list[str]] = {}
        for stat in CASCADE_SCORES:
            value = _number(getattr(block, stat))
            if value is not None:
                posts.append(ScorePost(f"cascade.{name}.{stat}", value, "NUMERIC", comments[stat], meta))
                continue
            why = block.cost_reason if stat == "cost_saved_usd" else block.reason
            null.setdefault(str(why), []).append(stat)
        if null:
            text = "; ".join(f"{', '.join(stats)}: {why}" for why, stats in null.items())
            posts.append(ScorePost(f"cascade.{name}.null", _clip(text), "TEXT", None, meta))
    return posts


def digest(posts: list[ScorePost], target: str) -> str:
    """Return a fingerprint of what was posted where, to skip an identical re-post."""
    payload = json.dumps([target, [p.as_json() for p in posts]], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()
