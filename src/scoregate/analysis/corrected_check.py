"""How well the corrected mean finds the human mean: a labelled sample of a fully rated set as the calibration set,
the rest as the run, whose human ratings are held back and only compared at the end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scoregate.analysis.corrected_estimators import CorrectedEstimate, corrected_mean


@dataclass(frozen=True)
class HeldOutCheck:
    """The corrected mean of the items outside a random calibration sample, beside their raw and human means."""

    labels: int
    seed: int
    n_run: int
    """Items outside the calibration sample with a judge score (the run)."""
    raw_mean: float | None
    """The judge's mean over the run: what a run reports without correction."""
    human_mean: float | None
    """The human mean over the run's items that have a human score: held back, the truth to compare with."""
    n_human: int
    corrected: CorrectedEstimate

    @property
    def covered(self) -> bool | None:
        """True when the corrected interval holds the held-back human mean (None when either is missing)."""
        c = self.corrected
        if c.ci_low is None or c.ci_high is None or self.human_mean is None:
            return None
        return c.ci_low <= self.human_mean <= c.ci_high

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return {
            "labels": self.labels, "seed": self.seed, "n_run": self.n_run, "raw_mean": self.raw_mean,
            "human_mean": self.human_mean, "n_human": self.n_human, "corrected": self.corrected.to_dict(),
            "covered": self.covered,
        }  # fmt: skip


def held_out_check(
    judge: Sequence[float | None],
    human: Sequence[float | None],
    labels: int,
    *,
    seed: int = 0,
    confidence: float = 0.95,
) -> HeldOutCheck:
    """Draw `labels` of the items both rated as the calibration set (seeded), correct the judge's mean over the
    others, and hold their human mean beside it; raise ValueError when too few items are left for a run."""
    paired = [i for i, (j, h) in enumerate(zip(judge, human, strict=True)) if j is not None and h is not None]
    if labels < 1:
        raise ValueError(f"{labels} labels: the calibration sample needs at least 1 item")
    if labels > len(paired) - 2:
        raise ValueError(
            f"{labels} labels of {len(paired)} items rated by both: leave at least 2 for the run (use fewer labels)"
        )
    chosen = set(np.random.default_rng(seed).choice(paired, size=labels, replace=False).tolist())
    rest = [i for i in range(len(judge)) if i not in chosen]
    run = [judge[i] for i in rest]
    measured = [v for v in run if v is not None]
    truth = [h for i in rest if (h := human[i]) is not None]
    estimate = corrected_mean(
        run, [judge[i] for i in sorted(chosen)], [human[i] for i in sorted(chosen)], confidence=confidence
    )
    return HeldOutCheck(
        labels=labels,
        seed=seed,
        n_run=len(measured),
        raw_mean=sum(measured) / len(measured) if measured else None,
        human_mean=sum(truth) / len(truth) if truth else None,
        n_human=len(truth),
        corrected=estimate,
    )
