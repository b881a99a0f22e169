"""Judge-vs-human agreement: correlations pooled and per document, QWK, exact/±1 agreement, MAE."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from scoregate.analysis.stats import bootstrap_ci, mean_ci
from scoregate.support.lazy_stats import stats

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap 95% CI; `value` is None when undefined and `reason` says why."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    reason: str | None = None

    @classmethod
    def undefined(cls, reason: str) -> Estimate:
        """Return an estimate that could not be computed, with the reason."""
        return cls(None, None, None, reason)


@dataclass(frozen=True)
class PooledAgreement:
    """Agreement over all measured (judge, human) pairs taken together."""

    spearman: Estimate
    kendall: Estimate
    pearson: Estimate
    qwk: Estimate
    exact: Estimate
    within_one: Estimate
    mae: Estimate


@dataclass(frozen=True)
class DocumentAgreement:
    """Summary-level correlations: computed within each document, then averaged over documents.

    Documents where the judge or the human scores are constant (or fewer than 2 pairs) are
    skipped, as in G-Eval's SummEval meta-evaluation; the CI resamples documents.
    """

    spearman: Estimate
    kendall: Estimate
    pearson: Estimate
    documents_used: int
    documents_skipped: int


@dataclass(frozen=True)
class Calibration:
    """How well a judge's scores track human scores on the same items."""

    n_total: int
    n_pairs: int
    scale: tuple[int, int] | None
    pooled: PooledAgreement
    per_document: DocumentAgreement | None

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return asdict(self)


def _pearson(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    xc = x - x.mean(axis=axis, keepdims=True)
    yc = y - y.mean(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=axis) / np.sqrt((xc * xc).sum(axis=axis) * (yc * yc).sum(axis=axis))
    return np.clip(r, -1.0, 1.0)  # NaN (a constant resample) passes through


def _spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return _pearson(stats.rankdata(x, axis=axis), stats.rankdata(y, axis=axis), axis=axis)


def _kendall(x: np.ndarray, y: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant resample: NaN, dropped by bootstrap_ci
        return float(stats.kendalltau(x, y).statistic)


def _qwk_from_indices(j: np.ndarray, h: np.ndarray, k: int, axis: int = -1) -> np.ndarray:
    """Quadratic weighted kappa of 0-based ratings in 0..k-1, vectorised over leading axes."""
    j, h = np.moveaxis(j, axis, -1), np.moveaxis(h, axis, -1)
    lead, n = j.shape[:-1], j.shape[-1]
    jj = j.reshape(-1, n).astype(np.int64)
    hh = h.reshape(-1, n).astype(np.int64)
    rows = jj.shape[0]
    cells = (np.arange(rows)[:, None] * k + jj) * k + hh
    observed = np.bincount(cells.ravel(), minlength=rows * k * k).reshape(rows, k, k) / n
    expected = observed.sum(axis=2)[:, :, None] * observed.sum(axis=1)[:, None, :]
    grid = np.arange(k)
    weights = (grid[:, None] - grid[None, :]) ** 2 / (k - 1) ** 2
    disagreement = (weights * observed).sum(axis=(1, 2))
    chance = (weights * expected).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(chance > 0, 1 - disagreement / chance, np.nan)
    return kappa.reshape(lead)


def quadratic_weighted_kappa(judge: ArrayLike, human: ArrayLike, scale: tuple[int, int]) -> float | None:
    """Return Cohen's kappa with quadratic weights of two integer ratings on `scale`; None when undefined."""
    lo, hi = scale
    j, h = np.asarray(judge, dtype=np.int64) - lo, np.asarray(human, dtype=np.int64) - lo
    if np.any((j < 0) | (j > hi - lo) | (h < 0) | (h > hi - lo)):
        raise ValueError(f"quadratic_weighted_kappa: a rating lies outside the scale {lo}..{hi}")
    kappa = float(_qwk_from_indices(j, h, hi - lo + 1))
    return kappa if math.isfinite(kappa) else None


def round_to_scale(values: np.ndarray, scale: tuple[int, int], side: str) -> np.ndarray:
    """Round half up to integers and check they fall on `scale`; raise ValueError naming the first that does not."""
    lo, hi = scale
    rounded = np.floor(values + 0.5).astype(np.int64)
    outside = np.flatnonzero((rounded < lo) | (rounded > hi))
    if outside.size:
        i = int(outside[0])
        raise ValueError(f"calibrate: {side} value {values[i]} (pair #{i}) is outside the scale {lo}..{hi}")
    return rounded


def _constant_reason(j: np.ndarray, h: np.ndarray) -> str | None:
    if j.size < 2:
        return f"{j.size} measured pair{'s' if j.size != 1 else ''}: a correlation needs at least 2"
    if np.all(j == j[0]):
        return "judge scores are constant: correlation is undefined"
    if np.all(h == h[0]):
        return "human scores are constant: correlation is undefined"
    return None


def _estimate(
    value: float,
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., Any],
    *,
    vectorized: bool,
    resamples: int,
    seed: int,
) -> Estimate:
    low, high, _ = bootstrap_ci(
        data, statistic, vectorized=vectorized, paired=len(data) > 1, resamples=resamples, seed=seed
    )
    reason = None if low is not None else f"the bootstrap CI is undefined for these {data[0].size} pairs"
    return Estimate(float(value), low, high, reason)


def _mean_estimate(per_item: np.ndarray, resamples: int, seed: int, *, unit: str = "pair") -> Estimate:
    low, high, _ = mean_ci(per_item, confidence=CONFIDENCE, resamples=resamples, seed=seed)
    reason = None
    if low is None:
        n = per_item.size
        reason = (
            f"only {n} {unit}{'s' if n != 1 else ''}: a confidence interval needs at least 2"
            if n < 2
            else f"the bootstrap CI is undefined for these {n} {unit}s"
        )
    return Estimate(float(np.mean(per_item)), low, high, reason)


def _pooled(j: np.ndarray, h: np.ndarray, scale: tuple[int, int] | None, resamples: int, seed: int) -> PooledAgreement:
    boot = {"resamples": resamples, "seed": seed}
    reason = _constant_reason(j, h)
    if reason:
        spearman = kendall = pearson = Estimate.undefined(reason)
    else:
        spearman = _estimate(float(stats.spearmanr(j, h).statistic), (j, h), _spearman, vectorized=True, **boot)
        kendall = _estimate(float(stats.kendalltau(j, h).statistic), (j, h), _kendall, vectorized=False, **boot)
        pearson = _estimate(float(stats.pearsonr(j, h).statistic), (j, h), _pearson, vectorized=True, **boot)
    mae = _mean_estimate(np.abs(j - h), resamples, seed) if j.size else Estimate.undefined("no measured pairs")
    if scale is None:
        qwk = exact = within_one = Estimate.undefined("needs integer ratings: pass scale=(low, high)")
    elif j.size == 0:
        qwk = exact = within_one = Estimate.undefined("no measured pairs")
    else:
        jr, hr = round_to_scale(j, scale, "judge"), round_to_scale(h, scale, "human")
        exact = _mean_estimate((jr == hr).astype(float), resamples, seed)
        within_one = _mean_estimate((np.abs(jr - hr) <= 1).astype(float), resamples, seed)
        kappa = quadratic_weighted_kappa(jr, hr, scale)
        if kappa is None:
            qwk = Estimate.undefined("both raters give one and the same rating: kappa is undefined")
        else:
            k = scale[1] - scale[0] + 1

            def qwk_stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
                return _qwk_from_indices(x, y, k, axis=axis)

            qwk = _estimate(kappa, (jr - scale[0], hr - scale[0]), qwk_stat, vectorized=True, **boot)
    return PooledAgreement(spearman, kendall, pearson, qwk, exact, within_one, mae)


def _per_document(j: np.ndarray, h: np.ndarray, docs: list[str], resamples: int, seed: int) -> DocumentAgreement:
    groups: dict[str, list[int]] = {}
    for i, doc in enumerate(docs):
        groups.setdefault(doc, []).append(i)
    per_doc: dict[str, list[float]] = {"spearman": [], "kendall": [], "pearson": []}
    skipped = 0
    for rows in groups.values():
        dj, dh = j[rows], h[rows]
        if _constant_reason(dj, dh):
            skipped += 1
            continue
        per_doc["spearman"].append(float(stats.spearmanr(dj, dh).statistic))
        per_doc["kendall"].append(float(stats.kendalltau(dj, dh).statistic))
        per_doc["pearson"].append(float(stats.pearsonr(dj, dh).statistic))
    used = len(groups) - skipped
    estimates = {}
    for name, values in per_doc.items():
        if used == 0:
            estimates[name] = Estimate.undefined("no document has varying judge and human scores")
        else:
            estimates[name] = _mean_estimate(np.asarray(values), resamples, seed, unit="document")
    return DocumentAgreement(**estimates, documents_used=used, documents_skipped=skipped)


def calibrate(
    judge: Sequence[float | None],
    human: Sequence[float | None],
    *,
    documents: Sequence[str] | None = None,
    scale: tuple[int, int] | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> Calibration:
    """Return how well `judge` scores agree with `human` scores of the same items (same index).

    Pairs where either side is None (unmeasured) are left out; `n_pairs` says how many remain.
    Pooled: Spearman, Kendall tau-b, Pearson and MAE on the raw values, each with a bootstrap 95%
    CI over items; with `scale` (low, high) also quadratic weighted kappa and exact / within-±1
    agreement on ratings rounded half up (a rating off the scale is an error). With `documents`
    (one id per item) also the summary-level correlations of `DocumentAgreement`.
    """
    if len(judge) != len(human):
        raise ValueError(f"calibrate: {len(judge)} judge scores but {len(human)} human scores")
    if documents is not None and len(documents) != len(judge):
        raise ValueError(f"calibrate: {len(documents)} document ids for {len(judge)} scores")
    if scale is not None and not (isinstance(scale[0], int) and isinstance(scale[1], int) and scale[0] < scale[1]):
        raise ValueError(f"calibrate: scale must be two integers (low, high) with low < high, got {scale}")
    keep = [i for i, (a, b) in enumerate(zip(judge, human, strict=True)) if a is not None and b is not None]
    j = np.asarray([judge[i] for i in keep], dtype=float)
    h = np.asarray([human[i] for i in keep], dtype=float)
    if not (np.all(np.isfinite(j)) and np.all(np.isfinite(h))):
        raise ValueError("calibrate: scores must be finite numbers; use None for an unmeasured score")
    pooled = _pooled(j, h, scale, resamples, seed)
    per_document = None
    if documents is not None:
        per_document = _per_document(j, h, [documents[i] for i in keep], resamples, seed)
    return Calibration(len(judge), len(keep), scale, pooled, per_document)
