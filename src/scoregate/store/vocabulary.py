"""The run's vocabulary, written once: the run metrics with their directions, the derived score keys, a call's
stage (the metrics a run's gates judge: `store/gate_metrics.py`).

Every place that names a run metric (gate validation, directions, the MLflow and Langfuse mirrors) reads
`RUN_METRICS`; this module imports nothing of scoregate, so the catalog may read it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["higher", "lower", "none"]
"""Which way a metric improves: `higher` or `lower` is better, `none` is described but never better or worse."""


@dataclass(frozen=True)
class RunMetric:
    """One run-level metric: its key in summary.json `run_metrics`, its direction and where it is used."""

    key: str
    direction: Direction
    gate: bool = True
    """A gate may name it (beside score keys and composites)."""
    mlflow: bool = True
    """Logged as an MLflow metric of the run."""
    langfuse: bool = True
    """Posted as a Langfuse run-level score."""
    in_summary: bool = True
    """summary.json `run_metrics` holds it (False: a comparison or ranking computes it)."""


RUN_METRICS: tuple[RunMetric, ...] = (
    RunMetric("items", "none", gate=False, langfuse=False),
    RunMetric("success_rate", "higher"),
    RunMetric("error_count", "lower"),
    RunMetric("latency_p50_ms", "lower"),
    RunMetric("latency_p95_ms", "lower"),
    RunMetric("latency_p99_ms", "lower"),
    RunMetric("latency_mean_ms", "lower"),
    RunMetric("tokens_in_total", "none"),
    RunMetric("tokens_out_total", "none"),
    RunMetric("cost_usd_total", "lower"),
    RunMetric("retries_total", "lower"),
    RunMetric("calls", "none", gate=False),
    RunMetric("failed_calls", "lower", gate=False),
    RunMetric("cost_usd_per_item", "lower", gate=False, mlflow=False, langfuse=False, in_summary=False),
)
"""Every run-level metric, in the order the mirrors log them."""

RUN_METRIC_DIRECTIONS: dict[str, Direction] = {m.key: m.direction for m in RUN_METRICS}
"""Run metric → direction."""
GATE_RUN_METRICS: tuple[str, ...] = tuple(m.key for m in RUN_METRICS if m.gate)
"""The run metrics a gate may name."""
MLFLOW_RUN_METRICS: tuple[str, ...] = tuple(m.key for m in RUN_METRICS if m.mlflow)
"""The run metrics logged as MLflow metrics."""
LANGFUSE_RUN_METRICS: tuple[str, ...] = tuple(m.key for m in RUN_METRICS if m.langfuse)
"""The run metrics posted as Langfuse run-level scores."""

SCORE_STATS = ("mean", "ci_low", "ci_high", "coverage")
"""Per numeric score, the statistics mirrored beside it (what a person compares across runs)."""


def derived_key(key: str, stat: str) -> str:
    """Return the name of a score's statistic as the mirrors write it: `<key>_<stat>` (`eqs_mean`, `eqs_ci_low`)."""
    return f"{key}_{stat}"


def stage_of(purpose: str, final_stage: str | None) -> str:
    """Return the stage of a call: `task` (or the pipeline's last stage), a stage name, `judge:<ev>`."""
    if purpose == "task":
        return final_stage or "task"
    return purpose.removeprefix("stage:")


def is_pipeline_call(purpose: str) -> bool:
    """Return True for a call of the pipeline itself (the task or a stage), False for a judge or a check."""
    return purpose == "task" or purpose.startswith("stage:")
