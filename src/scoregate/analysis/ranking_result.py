"""The result of ranking several runs: the ranked runs, the pairwise tests, and the Markdown a person reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class RankedRun:
    """One run in the ranking; `rank` is None when its metric was not measured (1 = best; ties share a rank)."""

    label: str
    run_id: str
    model: str
    items: int
    measured: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    latency_ms: float | None
    cost_usd_per_item: float | None
    success_rate: float | None
    rank: int | None


@dataclass(frozen=True)
class PairResult:
    """Candidate (the better-ranked run) against baseline on their shared measured items; Holm across pairs."""

    candidate: str
    baseline: str
    shared_items: int
    unmeasured: int
    comparison: dict[str, Any]
    """compare_paired's fields; its CI is Holm-adjusted across the pairs (level `ci_level`)."""
    p_holm: float | None
    verdict: str
    """The candidate against the baseline, read from the adjusted CI: better, worse, no change or inconclusive."""


@dataclass
class ModelRanking:
    """Everything `scoregate rank` shows; `to_dict()` is JSON-ready."""

    metric: str
    higher_is_better: bool
    dataset: str
    runs: list[RankedRun]
    pairs: list[PairResult]
    win_rate: dict[str, dict[str, float | None]]
    """win_rate[row][column]: share of shared items where row beats column (ties count half)."""
    pareto: dict[str, Any]
    best_by_metric: dict[str, dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    metric_source: str = "--metric"
    labels: dict[str, str] = field(default_factory=dict)
    """Metric → how tables name it, where a track names it otherwise (not part of `to_dict()`)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form."""
        found = asdict(self)
        del found["labels"]
        return found

    def label(self, metric: str) -> str:
        """How tables name `metric`."""
        return self.labels.get(metric, metric)

    def runs_text(self, labels: Sequence[str]) -> str:
        """Name runs compactly: `all N runs`; runs tied at one rank as `the N runs tied at rank R`; else each label.

        A tie is then named once per row, not as its every run under every metric and front.
        """
        if len(labels) > 1 and set(labels) == {r.label for r in self.runs}:
            return f"all {len(labels)} runs"
        tied: dict[int, list[str]] = {}
        for r in self.runs:
            if r.rank is not None:
                tied.setdefault(r.rank, []).append(r.label)
        parts: list[str] = []
        for label in labels:
            rank = next((r.rank for r in self.runs if r.label == label), None)
            group = tied.get(rank, []) if rank is not None else []
            if len(group) > 1 and set(group) <= set(labels):
                phrase = f"the {len(group)} runs tied at rank {rank}"
                parts += [phrase] if phrase not in parts else []
            else:
                parts.append(label)
        return ", ".join(parts)

    def to_markdown(self) -> str:
        """Return the ranking, pairwise tests, Pareto fronts and best-by-metric as Markdown tables."""
        fmt = _fmt
        lines = [f"## Ranking by {self.metric} ({'higher' if self.higher_is_better else 'lower'} is better)", ""]
        lines += ["| rank | model | mean | 95% CI | measured | latency ms | cost/item | success |", "|" + "---|" * 8]
        for r in self.runs:
            ci = f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}]"
            lines.append(
                f"| {r.rank or '-'} | {r.label} | {fmt(r.mean)} | {ci} | {r.measured}/{r.items} | "
                f"{fmt(r.latency_ms, 0)} | {fmt(r.cost_usd_per_item, 6)} | {fmt(r.success_rate)} |"
            )
        head = "| candidate | baseline | n | diff | Holm CI | level | p (Holm) | Cohen's dz | verdict |"
        lines += ["", "## Pairwise (candidate − baseline)", "", head, "|" + "---|" * 9]
        for p in self.pairs:
            c = p.comparison
            lines.append(
                f"| {p.candidate} | {p.baseline} | {p.shared_items} | {fmt(c['diff'])} | "
                f"[{fmt(c['diff_ci_low'])}, {fmt(c['diff_ci_high'])}] | {c['ci_level']:.1%} | {fmt(p.p_holm)} | "
                f"{fmt(c['cohens_dz'])} | {p.verdict} |"
            )
        labels = [r.label for r in self.runs]
        lines += ["", "## Win rate (row beats column)", "", "| | " + " | ".join(labels) + " |"]
        lines.append("|" + "---|" * (len(labels) + 1))
        lines += [f"| {a} | " + " | ".join(fmt(self.win_rate[a][b]) for b in labels) + " |" for a in labels]
        lines += ["", "## Pareto fronts", ""]
        for name in ("accuracy_vs_latency", "accuracy_vs_cost"):
            lines.append(f"- {name}: {self.runs_text(self.pareto[name]['frontier']) or 'none'}")
        lines += ["", "## Best by metric", "", "| metric | best | value |", "|---|---|---|"]
        best = self.best_by_metric
        lines += [f"| {self.label(m)} | {self.runs_text(b['best'])} | {fmt(b['value'])} |" for m, b in best.items()]
        return "\n".join(lines + [f"\n> {n}" for n in self.notes]) + "\n"


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
