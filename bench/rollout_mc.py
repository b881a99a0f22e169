"""Benchmark: the rollout watch's error rates and time to decide, read at every poll (issue 30, "Measured").

Simulated rollouts of a pass/fail-scored prompt (production passes 70% of traces) served to 10% canary traffic
over 48 hours, a poll every 15 minutes. Traces come as a Poisson process following the day; both versions'
pass rate may swing together over the day (drift 0.2: 50% at night, 90% in the afternoon). The units and
the decisions are the watch's own code (`analysis.rollout_units.form_units`, `analysis.rollout_monitor
.settle_rollouts`, the betting confidence sequence read at every poll with its running intersection), and
the sample-ratio check is the same sequence on each trace's arm (`crossings_at_counts`).

Per scenario: wrong decisions (equal versions: any promote or roll back; a better canary: roll back; a worse
one: promote) with their Monte Carlo standard error; the share decided in 48 h; the median traces (both
versions) and hours to a decision. References on the same simulated traces: a Welch t-test of all scored
traces, canary against production, peeked at after every poll (not anytime-valid: the error it makes is what
the sequence prevents), and the watch's units grouped without time windows.

    .venv/bin/python bench/rollout_mc.py                   # 2,000 rollouts per scenario, writes bench/results/
    .venv/bin/python bench/rollout_mc.py --runs 200 --out /tmp/x
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent / "src"))

from scoregate.analysis.rollout_monitor import settle_rollouts  # noqa: E402
from scoregate.analysis.rollout_rules import RolloutRule  # noqa: E402
from scoregate.analysis.sequential import crossings_at_counts  # noqa: E402
from support.rollout_traffic import HOUR, SimulatedRollouts, Traffic, simulate  # noqa: E402

SHARE, POLL_S, WINDOW_S, ALPHA, SRM_ALPHA = 0.10, 900.0, HOUR, 0.05, 0.001

SCENARIOS: list[dict[str, Any]] = [
    {"name": "equal versions, steady", "traffic": Traffic(), "truth": "equal"},
    {"name": "equal versions, both drifting over the day", "traffic": Traffic(drift=0.2), "truth": "equal"},
    {
        "name": "equal, drifting, production 30% scored",
        "traffic": Traffic(drift=0.2, scored_share=0.3),
        "truth": "equal",
        "no_windows": True,
    },
    {"name": "canary +5 points, drifting", "traffic": Traffic(drift=0.2, effect=0.05), "truth": "better"},
    {"name": "canary +10 points, drifting", "traffic": Traffic(drift=0.2, effect=0.10), "truth": "better"},
    {
        "name": "canary +5 points, 600 traces/h",
        "traffic": Traffic(drift=0.2, effect=0.05, traces_per_hour=600),
        "truth": "better",
    },
    {"name": "canary -10 points, drifting", "traffic": Traffic(drift=0.2, effect=-0.10), "truth": "worse"},
]
SRM_SPLITS = ((0.10, 60.0), (0.12, 60.0), (0.15, 60.0), (0.20, 60.0), (0.10, 600.0), (0.11, 600.0), (0.12, 600.0))
"""(share the canary really gets, traces per hour), the configured share being 10%."""


def _rate(hits: np.ndarray) -> dict[str, float]:
    p = float(np.mean(hits))
    return {"rate": p, "se": math.sqrt(max(p * (1 - p), 1e-12) / hits.size)}


def _wrong(words: np.ndarray, truth: str) -> np.ndarray:
    return {"equal": words != "continue", "better": words == "rollback", "worse": words == "promote"}[truth]


def _timing(sim: SimulatedRollouts, first: np.ndarray) -> dict[str, float | None]:
    hit = first >= 0
    if not hit.any():
        return {"median_traces": None, "median_hours": None}
    rows = np.flatnonzero(hit)
    return {
        "median_traces": float(np.median(sim.served[rows, first[rows]])),
        "median_hours": float(np.median(sim.polls[first[rows]] / HOUR)),
    }


def _peeking_welch(traffic: Traffic, sim: SimulatedRollouts, runs: int, seed: int, truth: str) -> dict[str, Any]:
    """A Welch t-test of every scored trace so far, canary against production, after every poll, at 1 − ALPHA.

    Read from 30 scored traces on each side (fewer make the test meaningless, not merely optimistic).
    """
    rng = np.random.default_rng([seed, 1])
    wrong = np.zeros(runs, dtype=bool)
    for r in range(runs):
        t, canary, score = traffic.sample(rng)
        ends = np.searchsorted(t, sim.polls, side="right")
        sides = []
        for arm in (canary, ~canary):
            n = np.r_[0, np.cumsum(arm)][ends]
            s1 = np.r_[0, np.cumsum(score * arm)][ends]
            s2 = np.r_[0, np.cumsum(score**2 * arm)][ends]
            mean = s1 / np.maximum(n, 1)
            var = (s2 - n * mean**2) / np.maximum(n - 1, 1)
            sides.append((n, mean, var))
        (nc, mc, vc), (np_, mp, vp) = sides
        se2 = vc / np.maximum(nc, 1) + vp / np.maximum(np_, 1)
        ok = (nc >= 30) & (np_ >= 30) & (se2 > 0)
        t_stat = np.where(ok, (mc - mp) / np.sqrt(np.where(ok, se2, 1)), 0)
        parts = (vc / np.maximum(nc, 1)) ** 2 / np.maximum(nc - 1, 1) + (vp / np.maximum(np_, 1)) ** 2 / np.maximum(
            np_ - 1, 1
        )
        df = np.where(ok, se2**2 / parts.clip(1e-300), 1)
        significant = ok & (2 * stats.t.sf(np.abs(t_stat), df) < ALPHA)
        if significant.any():
            word = "promote" if t_stat[np.argmax(significant)] > 0 else "rollback"
            wrong[r] = _wrong(np.array([word]), truth)[0]
    return _rate(wrong)


def metric_scenarios(runs: int, seed: int) -> list[dict[str, Any]]:
    """Each scenario: the watch's decisions, and the references on the same kind of traffic."""
    rule = RolloutRule(lo=-1.0, hi=1.0, share=SHARE, question="better", alpha=ALPHA, window_s=WINDOW_S)
    out = []
    for index, scenario in enumerate(SCENARIOS):
        traffic, truth = scenario["traffic"], scenario["truth"]
        start = time.perf_counter()
        sim = simulate(traffic, runs, seed + index, share=SHARE, window_s=WINDOW_S, poll_s=POLL_S)
        first, words = settle_rollouts(sim.differences, sim.counts, rule)
        row: dict[str, Any] = {
            "scenario": scenario["name"], "truth": truth, "traffic": asdict(traffic), "runs": runs,
            "polls": int(sim.polls.size), "wrong": _rate(_wrong(words, truth)),
            "promoted": _rate(words == "promote"), "rolled_back": _rate(words == "rollback"),
            "decided": _rate(words != "continue"), **_timing(sim, first),
            "units_median": float(np.median(sim.counts[:, -1])), "seconds": time.perf_counter() - start,
        }  # fmt: skip
        reference_runs = runs
        row["reference_peeking_welch"] = {
            "runs": reference_runs,
            "wrong": _peeking_welch(traffic, sim, reference_runs, seed + index, truth),
        }
        if scenario.get("no_windows"):
            flat = simulate(traffic, runs, seed + index, share=SHARE, window_s=1e12, poll_s=POLL_S)
            row["reference_no_windows"] = {
                "wrong": _rate(_wrong(settle_rollouts(flat.differences, flat.counts, rule)[1], truth))
            }
        out.append(row)
        print(
            f"  {scenario['name']}: wrong {row['wrong']['rate']:.4f}, decided {row['decided']['rate']:.3f}", flush=True
        )
    return out


def srm_scenarios(runs: int, seed: int) -> list[dict[str, Any]]:
    """The split check on every served trace's arm, read at every poll: halts per true split (configured 10%)."""
    out = []
    for index, (served, per_hour) in enumerate(SRM_SPLITS):
        traffic = replace(Traffic(traces_per_hour=per_hour), served_share=served)
        first_parts, served_parts = [], []
        for chunk, start in enumerate(range(0, runs, 250)):
            n = min(250, runs - start)
            sim = simulate(traffic, n, seed + 100 + 10 * index + chunk, share=SHARE, window_s=WINDOW_S, poll_s=POLL_S)
            above, below = crossings_at_counts(
                sim.canary.astype(float), SHARE, lo=0.0, hi=1.0, alpha=SRM_ALPHA, counts=sim.served
            )
            halted = above | below
            first_parts.append(np.where(halted.any(axis=1), np.argmax(halted, axis=1), -1))
            served_parts.append(sim.served)
        first = np.concatenate(first_parts)
        timing = _timing(
            SimulatedRollouts(np.zeros(0), np.zeros(0), np.vstack(served_parts), np.zeros(0), sim.polls), first
        )
        out.append({
            "configured": SHARE, "served": served, "traces_per_hour": per_hour, "runs": runs, "alpha": SRM_ALPHA,
            "halted": _rate(first >= 0), **timing,
        })  # fmt: skip
        print(f"  split {served:.0%} at {per_hour:g}/h: halted {out[-1]['halted']['rate']:.4f}", flush=True)
    return out


def _fmt(value: float | None, pattern: str = "{:.0f}") -> str:
    return "-" if value is None else pattern.format(value)


def markdown(result: dict[str, Any]) -> str:
    """Return the results as the Markdown table bench/README.md quotes."""
    lines = [
        f"Rollout watch Monte Carlo: {result['runs']} rollouts per scenario, 48 h, a look every 15 min "
        f"(192 polls), alpha {ALPHA}, canary share 10%, windows 1 h.",
        "",
        "| scenario | wrong decisions (± MC se) | decided in 48 h | median traces to decide | median hours "
        "| peeking Welch, wrong | no windows, wrong |",
        "| --- | --: | --: | --: | --: | --: | --: |",
    ]
    for row in result["metric"]:
        flat = row.get("reference_no_windows", {}).get("wrong")
        lines.append(
            f"| {row['scenario']} | {row['wrong']['rate']:.4f} ± {row['wrong']['se']:.4f} "
            f"| {row['decided']['rate']:.1%} | {_fmt(row['median_traces'])} | {_fmt(row['median_hours'], '{:.2f}')} "
            f"| {row['reference_peeking_welch']['wrong']['rate']:.3f} "
            f"| {_fmt(None if flat is None else flat['rate'], '{:.4f}')} |"
        )
    lines += [
        "",
        f"Sample-ratio check (alpha {SRM_ALPHA}), configured 10%:",
        "",
        "| served share | traces/h | halted in 48 h | median traces to halt | median hours |",
        "| --: | --: | --: | --: | --: |",
    ]
    for row in result["srm"]:
        lines.append(
            f"| {row['served']:.0%} | {row['traces_per_hour']:g} | {row['halted']['rate']:.4f} "
            f"| {_fmt(row['median_traces'])} | {_fmt(row['median_hours'], '{:.2f}')} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run every scenario and write bench/results/rollout_mc.{json,md}."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    start = time.perf_counter()
    result = {
        "runs": args.runs, "seed": args.seed, "alpha": ALPHA, "srm_alpha": SRM_ALPHA, "share": SHARE,
        "poll_s": POLL_S, "window_s": WINDOW_S, "metric": metric_scenarios(args.runs, args.seed),
        "srm": srm_scenarios(args.runs, args.seed),
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "platform": platform.platform()},
    }  # fmt: skip
    result["seconds"] = time.perf_counter() - start
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "rollout_mc.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "rollout_mc.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
