"""The judge cascade's guarantee: which first-judge answers to keep, chosen so agreement with humans holds.

A cascade judge asks a cheap first judge k times; its confidence on an item is the share of the k samples that
give its answer (agreement across repeated samples, the "simulated annotators" of Jung et al., ICLR 2025, "Trust
or Escalate", arXiv 2407.18370). Items at or above a confidence threshold keep the first judge's answer; the
others go to the strong judge. The threshold is chosen on a human-labelled calibration set by fixed-sequence
testing: candidate thresholds from the most confident down, each tested for H0 "agreement with humans on the
items kept < target" with the exact binomial p-value; the sequence stops at its first non-rejection, and the
last rejected threshold is used. Then agreement on the kept items is ≥ target with probability ≥ 1 − δ over
calibration draws (`bench/cascade_mc.py` measures it). The candidates depend only on the confidences (never on the
labels): a threshold keeping fewer items than `min_labels` could never be rejected, so it is not tested.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from scoregate.store.records import ScoreValue

STRONG_FOR_ALL = "(the strong judge scores every item)"


@dataclass(frozen=True)
class ThresholdTest:
    """One step of the sequence: a threshold, the calibration items it keeps, how many agree, the p-value."""

    threshold: float
    kept: int
    agreed: int
    p_value: float


@dataclass(frozen=True)
class CascadeChoice:
    """The threshold chosen (None: the strong judge scores everything, `reason` says why) and the evidence."""

    target: float
    delta: float
    labels: int
    """Calibration items with a human label and a first-judge answer."""
    threshold: float | None
    kept: int
    """Calibration items the first judge keeps at the threshold (0 without one)."""
    kept_agreement: float | None
    """Agreement with humans on those items (None without a threshold)."""
    tested: list[ThresholdTest] = field(default_factory=list)
    reason: str | None = None

    @property
    def share_kept(self) -> float:
        """Share of the calibration items the first judge keeps."""
        return self.kept / self.labels if self.labels else 0.0

    @property
    def guarantee(self) -> str:
        """The guarantee in words."""
        return f"agreement >= {_num(self.target)} with probability {_num(1 - self.delta)}"


@dataclass(frozen=True)
class CascadeCost:
    """What the cascade saved on judge calls, in USD (None with `reason` where the telemetry cannot tell)."""

    items: int
    kept: int
    first_cost: float | None
    strong_cost: float | None
    strong_per_item: float | None
    saved: float | None
    saved_share: float | None
    """Saved over what the strong judge alone would have cost on every item."""
    reason: str | None = None


def min_labels(target: float, delta: float) -> int:
    """The fewest kept items that can show agreement ≥ target at level δ (all of them agreeing)."""
    if target >= 1:
        return sys.maxsize  # no finite sample shows agreement 1 with δ > 0
    return math.ceil(math.log(delta) / math.log(target) - 1e-12)


def agreement_p_value(*, agreed: int, kept: int, target: float) -> float:
    """P(Binomial(kept, target) ≥ agreed): the p-value of H0 "agreement < target" given `agreed` of `kept`."""
    from scipy.stats import binom

    return float(binom.sf(agreed - 1, kept, target))


def sample_confidence(samples: Sequence[ScoreValue], answer: ScoreValue) -> float:
    """The share of the samples (unmeasured ones included) that gave `answer`; 0 when there is no answer."""
    if answer is None or not samples:
        return 0.0
    return sum(1 for s in samples if s is not None and s == answer) / len(samples)


def agrees(judge: float, human: float, tolerance: float) -> bool:
    """Whether a judge's answer agrees with a human rating: within `tolerance` of it."""
    return abs(judge - human) <= tolerance + 1e-9


def choose_threshold(
    confidences: Sequence[float], agreement: Sequence[bool], *, target: float, delta: float
) -> CascadeChoice:
    """Return the lowest confidence threshold fixed-sequence testing accepts for agreement ≥ target at level δ."""
    labels = len(confidences)
    need = min_labels(target, delta)
    candidates = sorted(set(confidences), reverse=True)
    tested: list[ThresholdTest] = []
    chosen: ThresholdTest | None = None
    for threshold in candidates:
        kept = [a for c, a in zip(confidences, agreement, strict=True) if c >= threshold]
        if len(kept) < need:
            continue
        agreed = sum(kept)
        test = ThresholdTest(
            threshold, len(kept), agreed, agreement_p_value(agreed=agreed, kept=len(kept), target=target)
        )
        tested.append(test)
        if test.p_value > delta:
            break
        chosen = test
    if chosen is not None:
        return CascadeChoice(target, delta, labels, chosen.threshold, chosen.kept, chosen.agreed / chosen.kept, tested)
    guarantee = f"agreement >= {_num(target)} with probability {_num(1 - delta)}"
    if need == sys.maxsize:
        reason = f"no number of labels can guarantee agreement 1 {STRONG_FOR_ALL}"
    elif not tested:
        reason = f"{labels} labelled items cannot guarantee {guarantee}: it takes at least {need} {STRONG_FOR_ALL}"
    else:
        first = tested[0]
        reason = (
            f"no confidence threshold of the first judge shows {guarantee}: it agrees {first.agreed / first.kept:.3f} "
            f"on the {first.kept} most confident labelled items {STRONG_FOR_ALL}"
        )
    return CascadeChoice(target, delta, labels, None, 0, None, tested, reason)


def cascade_cost(
    *, items: int, kept: int, first_cost: float | None, strong_cost: float | None, strong_items: int
) -> CascadeCost:
    """The cost saved: the strong judge's cost per item times the items kept, less what the first judge cost."""

    def unknown(reason: str) -> CascadeCost:
        return CascadeCost(items, kept, first_cost, strong_cost, None, None, None, reason)

    if first_cost is None or strong_cost is None:
        return unknown("the judge models report no cost (give them input_cost_per_mtok and output_cost_per_mtok)")
    if strong_items == 0:
        return unknown("no item went to the strong judge, so its cost per item is unknown")
    per_item = strong_cost / strong_items
    saved = per_item * kept - first_cost
    alone = per_item * items
    return CascadeCost(items, kept, first_cost, strong_cost, per_item, saved, saved / alone if alone else None)


def _num(x: float) -> str:
    return f"{x:g}" if abs(x - round(x, 3)) < 1e-12 else f"{x:.3f}"
