"""Per-sample matching of predicted against gold labels: topics as sets, risks and actions one to one."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import Levenshtein

from scoregate.tracks.tags.metrics.labels import Action, Risk
from scoregate.tracks.tags.metrics.vocabulary import severity_weight

ACTION_THRESHOLD = 0.8
"""Normalised Levenshtein similarity at or above which a predicted action matches a gold one."""

_PUNCT = re.compile(r"[^\w\s]")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Counts:
    """True positives, false positives and false negatives (weights allowed)."""

    tp: float = 0.0
    fp: float = 0.0
    fn: float = 0.0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)


def normalize_text(text: str) -> str:
    """Lower-case, drop punctuation, collapse whitespace (before the action similarity)."""
    return _SPACE.sub(" ", _PUNCT.sub("", text.lower())).strip()


def action_similarity(predicted: str, gold: str) -> float:
    """1 - Levenshtein distance / length of the longer normalised text (1.0 for two empty texts)."""
    return float(Levenshtein.normalized_similarity(normalize_text(predicted), normalize_text(gold)))


def topic_counts(predicted: Sequence[str], gold: Sequence[str]) -> Counts:
    """Exact label match over the two label sets."""
    p, g = set(predicted), set(gold)
    return Counts(len(p & g), len(p - g), len(g - p))


@dataclass(frozen=True, slots=True)
class RiskMatch:
    """One row of a sample's risk detail: a predicted and/or gold risk and whether type and severity agree."""

    predicted: str | None
    gold: str | None
    type_match: bool
    severity_match: bool


def match_risks(predicted: Sequence[Risk], gold: Sequence[Risk]) -> list[RiskMatch]:
    """Pair risks one to one by type, same-severity pairs first; unpaired ones stand alone."""
    pool = list(range(len(predicted)))
    rows: list[RiskMatch] = []
    unmatched_gold: list[Risk] = []
    for g in gold:  # exact (type and severity) first
        hit = next((i for i in pool if predicted[i] == g), None)
        if hit is None:
            unmatched_gold.append(g)
            continue
        pool.remove(hit)
        rows.append(RiskMatch(predicted[hit].key(), g.key(), True, True))
    for g in unmatched_gold:  # then type only
        hit = next((i for i in pool if predicted[i].type == g.type), None)
        if hit is None:
            rows.append(RiskMatch(None, g.key(), False, False))
            continue
        pool.remove(hit)
        rows.append(RiskMatch(predicted[hit].key(), g.key(), True, False))
    rows += [RiskMatch(predicted[i].key(), None, False, False) for i in pool]
    return rows


def risk_counts(predicted: Sequence[Risk], gold: Sequence[Risk]) -> tuple[Counts, Counts, Counts]:
    """(type only, type + severity, severity-weighted type + severity) counts.

    Weighted: a type+severity match adds its severity's weight to TP, an unmatched gold risk its weight to FN,
    an unmatched predicted risk its (predicted) weight to FP (critical 4, high 2, medium 1, low 0.5).
    """
    by_type = Counter(r.type for r in predicted), Counter(r.type for r in gold)
    tp_type = sum((by_type[0] & by_type[1]).values())
    exact_p, exact_g = Counter(predicted), Counter(gold)
    both = exact_p & exact_g
    tp_exact = sum(both.values())
    weighted = Counts(
        sum(severity_weight(r.severity) * n for r, n in both.items()),
        sum(severity_weight(r.severity) * n for r, n in (exact_p - both).items()),
        sum(severity_weight(r.severity) * n for r, n in (exact_g - both).items()),
    )
    return (
        Counts(tp_type, len(predicted) - tp_type, len(gold) - tp_type),
        Counts(tp_exact, len(predicted) - tp_exact, len(gold) - tp_exact),
        weighted,
    )


@dataclass(frozen=True, slots=True)
class ActionMatch:
    """One row of a sample's action detail: the gold action, its matched prediction and their similarity."""

    gold: str | None
    predicted: str | None
    similarity: float | None
    matched: bool
    gold_assignee: str | None = None
    predicted_assignee: str | None = None


def match_actions(
    predicted: Sequence[Action], gold: Sequence[Action], *, threshold: float = ACTION_THRESHOLD
) -> list[ActionMatch]:
    """Match actions one to one: the most matches (similarity >= threshold), then the highest total similarity.

    Every gold action gets a row (matched, or with its most similar prediction for inspection); unmatched
    predictions get a row of their own.
    """
    sims = np.array([[action_similarity(p.description, g.description) for g in gold] for p in predicted])
    pairs: dict[int, int] = {}
    if predicted and gold:
        from scipy.optimize import linear_sum_assignment  # scipy loads slowly; only runs that match actions need it

        gain = np.where(sims >= threshold, 1.0 + sims, 0.0)
        rows, cols = linear_sum_assignment(gain, maximize=True)
        pairs = {int(c): int(r) for r, c in zip(rows, cols, strict=True) if gain[r, c] > 0}
    out: list[ActionMatch] = []
    for j, g in enumerate(gold):
        if j in pairs:
            p = predicted[pairs[j]]
            sim = float(sims[pairs[j], j])
            out.append(ActionMatch(g.description, p.description, sim, True, g.assignee_role, p.assignee_role))
        elif predicted:
            i = int(np.argmax(sims[:, j]))
            out.append(ActionMatch(g.description, predicted[i].description, float(sims[i, j]), False, g.assignee_role))
        else:
            out.append(ActionMatch(g.description, None, None, False, g.assignee_role))
    used = set(pairs.values())
    out += [
        ActionMatch(None, p.description, None, False, None, p.assignee_role)
        for i, p in enumerate(predicted)
        if i not in used
    ]
    return out


def action_counts(matches: Sequence[ActionMatch]) -> Counts:
    """TP = matched pairs, FN = unmatched gold, FP = unmatched predictions."""
    tp = sum(m.matched for m in matches)
    fn = sum(m.gold is not None and not m.matched for m in matches)
    fp = sum(m.gold is None for m in matches)
    return Counts(tp, fp, fn)
