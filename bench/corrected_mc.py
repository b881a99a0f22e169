"""Monte Carlo: does the corrected 95% interval cover the human-rated truth, and does the raw one?

Each scenario draws `--datasets` (default 2,000) simulated datasets: a run of `--run-items` items the judge
scored, and a calibration set of `labels` other items of the same population that a human and the judge both
rated. Each dataset gets

- the corrected interval of `scoregate.analysis.corrected_estimators.corrected_mean` (the code a run uses:
  the sensitivity/specificity correction for pass/fail, PPI++ for 1-5 scores), and
- the raw interval: the percentile bootstrap (`--resamples`, default 1,000) of the run's judge mean, drawn as
  the multinomial of the run's observed score frequencies (the same distribution as resampling the items;
  scoregate's own summary uses BCa, which differs from it by far less than the bias studied here).

A scenario's coverage is the share of its datasets whose interval holds the truth (the population's human
mean); a dataset whose corrected figure is null (too few labels of one class) counts in `null`, not in the
coverage. Judges are biased both ways (lenient: passes too much / scores too high; strict: the reverse) and
by a little; label counts run from 30 to 500.

    .venv/bin/python bench/corrected_mc.py                 # 2,000 datasets per scenario; a few minutes
    .venv/bin/python bench/corrected_mc.py --datasets 200 --out /tmp/mc   # smoke test

Results: bench/results/corrected_mc.json and bench/results/corrected_mc.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from scoregate.analysis.corrected_difference import corrected_difference
from scoregate.analysis.corrected_estimators import corrected_mean

REPO = Path(__file__).resolve().parents[1]
LEVELS = np.arange(1, 6, dtype=float)
TARGET = 0.93


@dataclass(frozen=True)
class Scenario:
    """One population and judge: `human` is P(human score) over the levels, `judge[h]` P(judge score | human h)."""

    name: str
    kind: str
    human: np.ndarray
    judge: np.ndarray
    labels: int

    @property
    def truth(self) -> float:
        """The population's human mean (the estimand)."""
        return float(self.human @ self.levels)

    @property
    def judged_mean(self) -> float:
        """The population's judge mean (what the raw interval estimates)."""
        return float(self.human @ self.judge @ self.levels)

    @property
    def levels(self) -> np.ndarray:
        """The score values: 0/1 for pass/fail, 1..5 otherwise."""
        return np.array([0.0, 1.0]) if self.kind == "binary" else LEVELS


def _binary(name: str, prevalence: float, q0: float, q1: float, labels: int) -> Scenario:
    judge = np.array([[q0, 1 - q0], [1 - q1, q1]])
    return Scenario(name, "binary", np.array([1 - prevalence, prevalence]), judge, labels)


def _shifted(shift: int, spread: float) -> np.ndarray:
    """P(judge | human) on 1..5: the human score moved by `shift`, spread ±1 with probability `spread` each side."""
    table = np.zeros((5, 5))
    for h in range(5):
        for step, weight in ((-1, spread), (0, 1 - 2 * spread), (1, spread)):
            table[h, min(4, max(0, h + shift + step))] += weight
    return table


def scenarios() -> list[Scenario]:
    """The grid: pass/fail and 1-5 judges, lenient, strict and nearly fair, each with 30, 100 and 500 labels."""
    grid: list[Scenario] = []
    human_1_5 = np.array([0.10, 0.15, 0.30, 0.30, 0.15])
    for labels in (30, 100, 500):
        grid += [
            _binary(f"pass/fail lenient (q0 .70, q1 .95), truth .30, {labels} labels", 0.30, 0.70, 0.95, labels),
            _binary(f"pass/fail strict (q0 .95, q1 .70), truth .70, {labels} labels", 0.70, 0.95, 0.70, labels),
            _binary(f"pass/fail slight (q0 .95, q1 .95), truth .30, {labels} labels", 0.30, 0.95, 0.95, labels),
            _binary(f"pass/fail fair-ish (q0 .90, q1 .90), truth .50, {labels} labels", 0.50, 0.90, 0.90, labels),
            Scenario(f"1-5 lenient (+1, spread .2), {labels} labels", "1-5", human_1_5, _shifted(1, 0.2), labels),
            Scenario(f"1-5 strict (−1, spread .2), {labels} labels", "1-5", human_1_5, _shifted(-1, 0.2), labels),
            Scenario(f"1-5 noisy (0, spread .3), {labels} labels", "1-5", human_1_5, _shifted(0, 0.3), labels),
        ]
    return grid


def _draw(scenario: Scenario, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Return (human, judge) scores of `size` items drawn from the scenario."""
    levels = scenario.levels
    human_index = rng.choice(levels.size, size=size, p=scenario.human)
    cumulative = scenario.judge.cumsum(axis=1)[human_index]
    judge_index = (rng.random(size)[:, None] > cumulative).sum(axis=1)
    return levels[human_index], levels[np.minimum(judge_index, levels.size - 1)]


def _raw_interval(run: np.ndarray, levels: np.ndarray, resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    counts = np.array([(run == v).sum() for v in levels])
    means = rng.multinomial(run.size, counts / run.size, size=resamples) @ levels / run.size
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def simulate(scenario: Scenario, datasets: int, run_items: int, resamples: int, seed: int) -> dict[str, Any]:
    """Return the coverage of the corrected and raw intervals over `datasets` simulated datasets."""
    rng = np.random.default_rng(seed)
    truth = scenario.truth
    covered = raw_covered = nulls = 0
    widths: list[float] = []
    reasons: dict[str, int] = {}
    for _ in range(datasets):
        _, run = _draw(scenario, run_items, rng)
        human, judge = _draw(scenario, scenario.labels, rng)
        estimate = corrected_mean(run.tolist(), judge.tolist(), human.tolist())
        if estimate.ci_low is None or estimate.ci_high is None:
            nulls += 1
            key = (estimate.reason or "no reason").split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
        else:
            covered += estimate.ci_low <= truth <= estimate.ci_high
            widths.append(estimate.ci_high - estimate.ci_low)
        low, high = _raw_interval(run, scenario.levels, resamples, rng)
        raw_covered += low <= truth <= high
    computed = datasets - nulls
    return {
        "scenario": scenario.name,
        "kind": scenario.kind,
        "labels": scenario.labels,
        "truth": truth,
        "judge_mean": scenario.judged_mean,
        "bias": scenario.judged_mean - truth,
        "datasets": datasets,
        "computed": computed,
        "null": nulls,
        "null_reasons": reasons,
        "corrected_coverage": covered / computed if computed else None,
        "corrected_mean_width": float(np.mean(widths)) if widths else None,
        "raw_coverage": raw_covered / datasets,
    }


@dataclass(frozen=True)
class PairedScenario:
    """Two prompts' pass/fail outputs on the same items, judged by one judge (specificity q0, sensitivity q1)."""

    name: str
    baseline: float
    """P(human pass) of the baseline's output."""
    lose: float
    """P(the candidate's output fails | the baseline's passes)."""
    gain: float
    """P(the candidate's output passes | the baseline's fails)."""
    q0: float
    q1: float
    labels: int

    @property
    def truth(self) -> float:
        """The true difference of pass rates, candidate − baseline."""
        return self.baseline * (1 - self.lose) + (1 - self.baseline) * self.gain - self.baseline


def paired_scenarios() -> list[PairedScenario]:
    """A regression of 0.11 seen by a lenient and by a strict pass/fail judge, with 30, 100 and 500 labels."""
    return [
        PairedScenario(f"paired, {judge} (q0 {q0:.2f}, q1 {q1:.2f}), Δ −0.11, {labels} labels", 0.6, 0.25, 0.1, q0, q1,
                       labels)
        for labels in (30, 100, 500)
        for judge, q0, q1 in (("lenient", 0.70, 0.95), ("strict", 0.95, 0.70))
    ]  # fmt: skip


def _judge(truth: np.ndarray, q0: float, q1: float, rng: np.random.Generator) -> np.ndarray:
    passes = np.where(truth == 1, rng.random(truth.size) < q1, rng.random(truth.size) < 1 - q0)
    return passes.astype(float)


def simulate_paired(
    scenario: PairedScenario, datasets: int, run_items: int, resamples: int, seed: int
) -> dict[str, Any]:
    """Return the coverage of the corrected and raw intervals of the paired difference over simulated datasets."""
    rng = np.random.default_rng(seed)
    s = scenario
    covered = raw_covered = nulls = 0
    widths: list[float] = []
    for _ in range(datasets):
        base = (rng.random(run_items) < s.baseline).astype(float)
        flip = np.where(base == 1, rng.random(run_items) < s.lose, rng.random(run_items) < s.gain)
        cand = np.where(flip, 1 - base, base)
        judged_base, judged_cand = _judge(base, s.q0, s.q1, rng), _judge(cand, s.q0, s.q1, rng)
        human = (rng.random(s.labels) < 0.5).astype(float)
        estimate = corrected_difference(
            judged_cand.tolist(), judged_base.tolist(), _judge(human, s.q0, s.q1, rng).tolist(), human.tolist()
        )
        if estimate.ci_low is None or estimate.ci_high is None:
            nulls += 1
        else:
            covered += estimate.ci_low <= s.truth <= estimate.ci_high
            widths.append(estimate.ci_high - estimate.ci_low)
        d = judged_cand - judged_base
        levels = np.array([-1.0, 0.0, 1.0])
        counts = np.array([(d == v).sum() for v in levels])
        means = rng.multinomial(d.size, counts / d.size, size=resamples) @ levels / d.size
        low, high = np.percentile(means, [2.5, 97.5])
        raw_covered += low <= s.truth <= high
    computed = datasets - nulls
    judged = s.truth * (s.q0 + s.q1 - 1)
    return {
        "scenario": s.name, "kind": "paired", "labels": s.labels, "truth": s.truth, "judge_mean": judged,
        "bias": judged - s.truth, "datasets": datasets, "computed": computed, "null": nulls, "null_reasons": {},
        "corrected_coverage": covered / computed if computed else None,
        "corrected_mean_width": float(np.mean(widths)) if widths else None, "raw_coverage": raw_covered / datasets,
    }  # fmt: skip


def _markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        "# Corrected vs raw 95% intervals: coverage of the human-rated truth (`bench/corrected_mc.py`)",
        "",
        f"{meta['datasets']:,} simulated datasets per scenario, {meta['run_items']:,} run items each, raw bootstrap "
        f"{meta['resamples']:,} resamples; seed {meta['seed']}; {meta['when']} on {meta['machine']} "
        f"({meta['seconds']:.0f} s). Target: corrected coverage ≥ {TARGET:.0%} in every scenario.",
        "",
        "The paired rows gate a regression: the truth is the difference of human pass rates (candidate − baseline), "
        "the judge's column what the judge sees of it, the raw interval the bootstrap of the judged paired difference.",
        "",
        "| scenario | truth | judge mean | corrected coverage | mean width | null | raw coverage |",
        "| --- | --: | --: | --: | --: | --: | --: |",
    ]
    for r in rows:
        corrected = "—" if r["corrected_coverage"] is None else f"{r['corrected_coverage']:.1%}"
        width = "—" if r["corrected_mean_width"] is None else f"{r['corrected_mean_width']:.3f}"
        lines.append(
            f"| {r['scenario']} | {r['truth']:.3f} | {r['judge_mean']:.3f} | {corrected} | {width} | "
            f"{r['null']} | {r['raw_coverage']:.1%} |"
        )
    worst = min((r["corrected_coverage"] for r in rows if r["corrected_coverage"] is not None), default=None)
    verdict = "met" if worst is not None and worst >= TARGET else "NOT met"
    lines += ["", f"Lowest corrected coverage: {worst:.1%} — target {verdict}." if worst is not None else ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run every scenario, write the JSON and markdown results, print the table; 1 when a coverage misses."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=int, default=2000)
    parser.add_argument("--run-items", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = []
    for i, scenario in enumerate(scenarios()):
        rows.append(simulate(scenario, args.datasets, args.run_items, args.resamples, args.seed + i))
        print(f"{rows[-1]['scenario']}: corrected {rows[-1]['corrected_coverage']}, raw {rows[-1]['raw_coverage']}")
    offset = len(rows)
    for i, paired in enumerate(paired_scenarios()):
        rows.append(simulate_paired(paired, args.datasets, args.run_items, args.resamples, args.seed + offset + i))
        print(f"{rows[-1]['scenario']}: corrected {rows[-1]['corrected_coverage']}, raw {rows[-1]['raw_coverage']}")
    meta = {
        "datasets": args.datasets,
        "run_items": args.run_items,
        "resamples": args.resamples,
        "seed": args.seed,
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "seconds": time.perf_counter() - started,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "corrected_mc.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    table = _markdown(rows, meta)
    (args.out / "corrected_mc.md").write_text(table, encoding="utf-8")
    print(table)
    covered = [r["corrected_coverage"] for r in rows if r["corrected_coverage"] is not None]
    return 0 if covered and min(covered) >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
