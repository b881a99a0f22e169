"""Benchmark: the stop-early rule's error rate and stopping time under continuous monitoring (issue 22, item 1).

Simulated comparisons of a candidate against a reference on N = 400 items, run in a random order, the
confidence sequence read after every batch (`scoregate.analysis.sequential_stop.settle_many`, the code a run
uses). For each score shape, true effect (d_z = mean / sd of the paired difference), method, batch size and
alpha: the rate of wrong verdicts (under no difference: any "better"/"worse"; under a difference: "worse"),
with its Monte Carlo standard error, and where the runs stopped. Two references on the same simulated data:
a fixed-sample paired t-test on all 400 items (one look), and a fixed-sample 95% t-interval peeked at after
every batch (not anytime-valid: the error it makes is what the sequence prevents). Then timings, against
the run's existing bootstrap CI (`compare_paired`, 5,000 resamples) on the same items.

    .venv/bin/python bench/sequential.py                       # 10,000 runs per cell, writes bench/results/
    .venv/bin/python bench/sequential.py --runs 500 --out /tmp/x
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent / "src"))

from scoregate.analysis.paired import compare_paired  # noqa: E402
from scoregate.analysis.sequential import confidence_sequence  # noqa: E402
from scoregate.analysis.sequential_stop import SequentialMonitor, StopRule, settle_many  # noqa: E402
from support.paired_scores import (  # noqa: E402
    JUDGE_MARGINAL,
    JUDGE_SCALE,
    PairedShape,
    binary_shape,
    judge_with_dz,
    judge_with_mean,
    latent_shape,
)

ITEMS = 400
EFFECTS = (0.0, 0.2, 0.3, 0.5, 0.8)
BATCHES = (1, 10, 50)
ALPHAS = (0.05, 0.10)
METHODS = ("betting", "empirical-bernstein")
SIMILARITY_LEVELS = np.linspace(0, 1, 21)


def _calibrated(make: Callable[[float], PairedShape], dz: float) -> PairedShape:
    """Return make(shift) with d_z = dz (bisection on the shift)."""
    if dz == 0:
        return make(0.0)
    low, high = 0.0, 3.0
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if make(mid).dz < dz else (low, mid)
    return make((low + high) / 2)


SHAPES: dict[str, Callable[[float], PairedShape]] = {
    "judge 1-5, 60% redrawn": lambda dz: judge_with_dz(dz),
    "judge 1-5, latent rho 0.6": lambda dz: _calibrated(
        lambda s: latent_shape("latent judge", JUDGE_SCALE, JUDGE_MARGINAL, rho=0.6, shift=s), dz
    ),
    "pass/fail 0/1, 40% discordant": lambda dz: binary_shape(dz, discordant=0.4),
    "similarity 0-1 (21 levels), latent rho 0.7": lambda dz: _calibrated(
        lambda s: latent_shape("similarity", SIMILARITY_LEVELS, np.full(21, 1 / 21), rho=0.7, shift=s), dz
    ),
}


def _rate(hits: np.ndarray) -> dict[str, float]:
    p = float(hits.mean())
    return {"rate": p, "se": math.sqrt(max(p * (1 - p), 1e-12) / hits.size)}


def _stops(n: np.ndarray) -> dict[str, float]:
    q1, med, q3 = np.percentile(n, [25, 50, 75])
    return {"median_n": float(med), "median_fraction": float(med) / ITEMS, "q1_n": float(q1), "q3_n": float(q3),
            "mean_fraction": float(n.mean()) / ITEMS}  # fmt: skip


def _references(d: np.ndarray, looks: np.ndarray, alpha: float, null: bool) -> dict[str, Any]:
    """Fixed-sample paired t: once on all items, and peeked at after every batch (from 2 items with spread)."""
    t = looks.astype(float)
    sums, squares = np.cumsum(d, axis=1)[:, looks - 1], np.cumsum(d**2, axis=1)[:, looks - 1]
    mean = sums / t
    se = np.sqrt(np.maximum(squares / t - mean**2, 0) / np.maximum(t - 1, 1))
    half = stats.t.ppf(1 - alpha / 2, np.maximum(t - 1, 1)) * se
    defined = (t >= 2) & (se > 0)
    better, worse = defined & (mean - half > 0), defined & (mean + half < 0)
    peek_better, peek_worse = better.any(axis=1), worse.any(axis=1)
    first = np.argmax(better | worse, axis=1)
    settled = (better | worse)[np.arange(d.shape[0]), first]
    return {
        "fixed_n_t_test": {
            "wrong": _rate((better[:, -1] | worse[:, -1]) if null else worse[:, -1]),
            "settled": _rate(better[:, -1] | worse[:, -1]),
            "items_fraction": 1.0,
        },
        "peeking_t_interval": {
            "wrong": _rate((peek_better | peek_worse) if null else peek_worse),
            "settled": _rate(settled),
            **_stops(np.where(settled, looks[first], ITEMS)),
        },
    }


def simulate(runs: int, seed: int) -> list[dict[str, Any]]:
    """Every cell of shapes × effects × methods × batches × alphas, on shared simulated data per shape/effect."""
    cells = []
    for s_index, (shape_name, make) in enumerate(SHAPES.items()):
        for e_index, dz in enumerate(EFFECTS):
            shape = make(dz)
            d = shape.sample(np.random.default_rng([seed, s_index, e_index]), runs, ITEMS)
            for alpha in ALPHAS:
                for batch in BATCHES:
                    looks = np.arange(batch, ITEMS + 1, batch)
                    refs = _references(d, looks, alpha, null=dz == 0)
                    for method in METHODS:
                        rule = StopRule(lo=shape.lo, hi=shape.hi, alpha=alpha, method=method)  # type: ignore[arg-type]
                        start = time.perf_counter()
                        out = settle_many(d, rule, looks=looks)
                        elapsed = time.perf_counter() - start
                        wrong = np.isin(out.verdict, ["better", "worse"]) if dz == 0 else out.verdict == "worse"
                        cells.append({
                            "shape": shape_name, "dz": dz, "true_mean": shape.mean, "sd": shape.sd, "alpha": alpha,
                            "batch": batch, "method": method, "runs": runs, "wrong": _rate(wrong),
                            "settled": _rate(out.verdict != "inconclusive"), **_stops(out.n),
                            "seconds": elapsed, "references": refs,
                        })  # fmt: skip
            print(f"  {shape_name}, d_z {dz}: done", flush=True)
    return cells


def non_inferiority(runs: int, seed: int) -> list[dict[str, Any]]:
    """Judge 1-5, margin 0.2: a true difference on the margin (wrong "non-inferior" rate) and at 0 (stops)."""
    out = []
    for index, (label, mean) in enumerate((("on the margin (-0.2)", -0.2), ("no difference (0)", 0.0))):
        shape = judge_with_mean(mean)
        d = shape.sample(np.random.default_rng([seed, 99, index]), runs, ITEMS)
        for method in METHODS:
            rule = StopRule(lo=-4, hi=4, question="non-inferior", margin=0.2, method=method)  # type: ignore[arg-type]
            stops = settle_many(d, rule, looks=np.arange(10, ITEMS + 1, 10))
            out.append({
                "case": label, "true_mean": mean, "method": method, "batch": 10, "alpha": 0.05, "margin": 0.2,
                "non_inferior": _rate(stops.verdict == "non-inferior"),
                "inferior": _rate(stops.verdict == "inferior"), **_stops(stops.n),
            })  # fmt: skip
    return out


def _best_of(repeats: int, call: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def timings() -> dict[str, Any]:
    """Seconds (median of 5) for the sequence's computations, and the bootstrap CI a run already computes."""
    rng = np.random.default_rng(5)
    big = rng.uniform(-1, 1, 100_000)
    items = judge_with_dz(0.5).sample(rng, 1, ITEMS)[0]

    def run_monitor(method: str) -> None:
        monitor = SequentialMonitor(StopRule(lo=-4, hi=4, method=method), total=ITEMS)  # type: ignore[arg-type]
        for start in range(0, ITEMS, 10):
            monitor.add(items[start : start + 10])

    bootstrap = _best_of(5, lambda: compare_paired(np.zeros(ITEMS), items))
    out = {
        "empirical_bernstein_100k_every_item_s": _best_of(
            5, lambda: confidence_sequence(big, lo=-4, hi=4, method="empirical-bernstein")
        ),
        "betting_100k_one_look_s": _best_of(5, lambda: confidence_sequence(big, lo=-4, hi=4, looks=[100_000])),
        "betting_400_items_40_looks_monitor_s": _best_of(5, lambda: run_monitor("betting")),
        "empirical_bernstein_400_items_40_looks_monitor_s": _best_of(5, lambda: run_monitor("empirical-bernstein")),
        "reference_bootstrap_ci_400_items_s": bootstrap,
    }
    out["betting_monitor_vs_bootstrap"] = out["betting_400_items_40_looks_monitor_s"] / bootstrap
    return out


def _cell(cells: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    return next(c for c in cells if all(c[k] == v for k, v in match.items()))


def markdown(result: dict[str, Any]) -> str:
    """The results as the tables of bench/results/sequential.md."""
    cells, runs = result["cells"], result["runs"]
    lines = [
        "# Stop early, validly: Monte Carlo of the confidence sequence (issue 22)",
        "",
        f"`{result['command']}` — {runs:,} simulated comparisons per cell, N = {ITEMS} items, seed {result['seed']}, "
        f"{result['wall_s']:.0f} s on {result['machine']}, commit {result['commit']}.",
        "",
        "## Issue 22's check (batch 10, alpha 0.05)",
        "",
        "| shape | method | wrong verdicts, no difference (± SE) | median stop, d_z 0.5 | settled by 400, d_z 0.5 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for shape in SHAPES:
        for method in METHODS:
            null = _cell(cells, shape=shape, dz=0.0, method=method, batch=10, alpha=0.05)
            hit = _cell(cells, shape=shape, dz=0.5, method=method, batch=10, alpha=0.05)
            lines.append(
                f"| {shape} | {method} | {null['wrong']['rate']:.4f} ± {null['wrong']['se']:.4f} | "
                f"{hit['median_n']:.0f} items ({hit['median_fraction']:.1%}) | {hit['settled']['rate']:.1%} |"
            )
    lines += ["", "Same data, fixed-sample references (batch 10, alpha 0.05):", "",
              "| shape | peeking t-interval: wrong verdicts, no difference | fixed-n t-test (400 items), d_z 0.5 |",
              "| --- | --- | --- |"]  # fmt: skip
    for shape in SHAPES:
        null = _cell(cells, shape=shape, dz=0.0, method="betting", batch=10, alpha=0.05)["references"]
        hit = _cell(cells, shape=shape, dz=0.5, method="betting", batch=10, alpha=0.05)["references"]
        lines.append(
            f"| {shape} | {null['peeking_t_interval']['wrong']['rate']:.4f} | "
            f"{hit['fixed_n_t_test']['settled']['rate']:.1%} (always 400 items) |"
        )
    lines += ["", "## Every cell: wrong-verdict rate / median stopping fraction", ""]
    for alpha in ALPHAS:
        header = " | ".join(f"d_z {dz:g}" for dz in EFFECTS)
        lines += [f"### alpha {alpha:g}", "", f"| shape | method | batch | {header} |",
                  "| --- | --- | --- |" + " --- |" * len(EFFECTS)]  # fmt: skip
        for shape in SHAPES:
            for method in METHODS:
                for batch in BATCHES:
                    row = [_cell(cells, shape=shape, dz=dz, method=method, batch=batch, alpha=alpha) for dz in EFFECTS]
                    values = " | ".join(f"{c['wrong']['rate']:.4f} / {c['median_fraction']:.2f}" for c in row)
                    lines.append(f"| {shape} | {method} | {batch} | {values} |")
        lines.append("")
    lines += ["## Non-inferiority (judge 1-5, margin 0.2, batch 10, alpha 0.05)", "",
              "| true difference | method | claimed non-inferior | claimed inferior | median stop |",
              "| --- | --- | --- | --- | --- |"]  # fmt: skip
    for row in result["non_inferiority"]:
        lines.append(
            f"| {row['case']} | {row['method']} | {row['non_inferior']['rate']:.4f} | {row['inferior']['rate']:.4f} | "
            f"{row['median_n']:.0f} items ({row['median_fraction']:.1%}) |"
        )
    t = result["timings"]
    lines += ["", "## Timings (median of 5)", "", "| computation | seconds |", "| --- | --- |"]
    lines += [f"| {k.removesuffix('_s').replace('_', ' ')} | {v:.4f} |" for k, v in t.items() if k.endswith("_s")]
    per_item_ms = 1000 * t["betting_400_items_40_looks_monitor_s"] / ITEMS
    lines += ["", f"Reading the betting sequence after every batch of 10 over a 400-item run costs "
              f"{t['betting_monitor_vs_bootstrap']:.1f}× one paired bootstrap CI (`compare_paired`, 5,000 resamples) "
              f"of the same items: {per_item_ms:.2f} ms per item.", ""]  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    """Run the Monte Carlo and the timings; write sequential.json and sequential.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    start = time.perf_counter()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout
    result: dict[str, Any] = {
        "command": " ".join(["python", "bench/sequential.py", *sys.argv[1:]]),
        "runs": args.runs, "seed": args.seed, "items": ITEMS, "commit": commit.strip(),
        "machine": f"{platform.machine()}, {platform.python_version()}, numpy {np.__version__}",
        "cells": simulate(args.runs, args.seed), "non_inferiority": non_inferiority(args.runs, args.seed),
        "timings": timings(),
    }  # fmt: skip
    result["wall_s"] = time.perf_counter() - start
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sequential.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / "sequential.md").write_text(markdown(result))
    print(markdown(result).split("## Every cell")[0])


if __name__ == "__main__":
    main()
