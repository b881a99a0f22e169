"""Judge drift: the change in a judge's agreement with humans between its calibration and a canary re-score.

Both scorings rate the same items against the same human ratings, so the change is paired: the
bootstrap resamples items and recomputes `agreement(canary, human) - agreement(calibrated, human)`
on each resample (BCa 95% CI, as `scoregate calibrate`'s own intervals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from scoregate.analysis.calibration import Estimate, quadratic_weighted_kappa, round_to_scale
from scoregate.analysis.stats import bootstrap_ci
from scoregate.support.lazy_stats import stats

DRIFT_METRICS = ("spearman", "kendall", "pearson", "qwk", "exact", "within_one")
SCALED = ("qwk", "exact", "within_one")


@dataclass(frozen=True)
class Drift:
    """Agreement at calibration and at the canary on the items both scored, and the change with its CI."""

    metric: str
    n_pairs: int
    calibrated: float | None
    canary: float | None
    change: Estimate
    tolerance: float
    stat: Literal["value", "ci_high"]
    status: Literal["ok", "drifted", "unknown"]
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return asdict(self)


def agreement(judge: np.ndarray, human: np.ndarray, metric: str, scale: tuple[int, int] | None) -> float:
    """Return one pooled agreement statistic of `calibrate` (NaN when undefined on these values)."""
    if metric in SCALED:
        if scale is None:
            return math.nan
        j, h = round_to_scale(judge, scale, "judge"), round_to_scale(human, scale, "human")
        if metric == "exact":
            return float(np.mean(j == h))
        if metric == "within_one":
            return float(np.mean(np.abs(j - h) <= 1))
        kappa = quadratic_weighted_kappa(j, h, scale)
        return math.nan if kappa is None else kappa
    if judge.size < 2 or np.all(judge == judge[0]) or np.all(human == human[0]):
        return math.nan
    test = {"spearman": stats.spearmanr, "kendall": stats.kendalltau, "pearson": stats.pearsonr}[metric]
    return float(test(judge, human).statistic)


def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:+.3f}"


def judge_drift(
    calibrated: Sequence[float | None],
    canary: Sequence[float | None],
    human: Sequence[float | None],
    *,
    metric: str = "spearman",
    tolerance: float = 0.1,
    stat: Literal["value", "ci_high"] = "value",
    scale: tuple[int, int] | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> Drift:
    """Return the drift of a judge from `calibrated` to `canary` scores of the same items (same index).

    Items lacking any of the three values are left out. Drifted when the loss of agreement exceeds
    `tolerance`: the estimate's (`stat: value`) or even the CI's upper end's (`stat: ci_high`).
    """
    if metric not in DRIFT_METRICS:
        raise ValueError(f"judge_drift: unknown metric {metric!r}; use one of {', '.join(DRIFT_METRICS)}")
    if not len(calibrated) == len(canary) == len(human):
        raise ValueError("judge_drift: calibrated, canary and human scores must have one value per item each")
    keep = [i for i in range(len(human)) if None not in (calibrated[i], canary[i], human[i])]
    old, new, hum = (np.asarray([seq[i] for i in keep], dtype=float) for seq in (calibrated, canary, human))
    before, after = agreement(old, hum, metric, scale), agreement(new, hum, metric, scale)
    calibrated_value = None if math.isnan(before) else before
    canary_value = None if math.isnan(after) else after
    if calibrated_value is None or canary_value is None:
        why = "needs integer ratings (a scale)" if metric in SCALED and scale is None else "undefined on these pairs"
        change = Estimate.undefined(f"{metric} is {why} ({len(keep)} pairs)")
        return Drift(
            metric,
            len(keep),
            calibrated_value,
            canary_value,
            change,
            tolerance,
            stat,
            "unknown",
            f"drift of {metric} could not be measured: {change.reason}",
        )

    def difference(o: np.ndarray, n: np.ndarray, h: np.ndarray) -> float:
        return agreement(n, h, metric, scale) - agreement(o, h, metric, scale)

    low, high, _ = bootstrap_ci(
        (old, new, hum), difference, vectorized=False, paired=True, resamples=resamples, seed=seed
    )
    value = canary_value - calibrated_value
    change = Estimate(value, low, high, None if low is not None else "the bootstrap CI is undefined for these pairs")
    judged = value if stat == "value" else high
    if judged is None:
        status: Literal["ok", "drifted", "unknown"] = "unknown"
    else:
        status = "drifted" if judged < -tolerance else "ok"
    ci = "" if low is None else f" [{low:+.3f}, {high:+.3f}]"
    word = {"ok": "within", "drifted": "beyond", "unknown": "not measured against"}[status]
    detail = (
        f"{metric} {calibrated_value:.3f} at calibration, {canary_value:.3f} now: change {_fmt(value)}{ci} "
        f"(95% CI, n={len(keep)}), {word} the tolerance of -{tolerance:g}"
        + ("" if stat == "value" else " (judged on the CI's upper end)")
    )
    return Drift(metric, len(keep), calibrated_value, canary_value, change, tolerance, stat, status, detail)
