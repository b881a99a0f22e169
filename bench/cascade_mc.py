"""Benchmark: does the judge cascade's guarantee hold? Realised agreement ≥ target in ≥ 1 − δ of calibration draws.

A simulated first judge asked k = 5 times has a confidence in {0.2, 0.4, 0.6, 0.8, 1.0} on each item (the share of
its samples that give its answer); population P says how often each confidence occurs and how likely an answer at
that confidence agrees with the human rating. One *calibration draw* is n labelled items from P; the shipped
`scoregate.analysis.cascade.choose_threshold` picks the threshold by fixed-sequence testing, and the draw *fails*
when a threshold was chosen and the population's agreement on the items at or above it is below the target. A draw
that chooses no threshold sends every item to the strong judge: it keeps the guarantee (nothing is kept) and is
counted as *abstained*. The guarantee: failures ≤ δ of the draws, in every scenario.

Populations (agreement by confidence 0.2 … 1.0, each confidence equally frequent unless said):

- `calibrated`: 0.50, 0.62, 0.74, 0.86, 0.97 — confidence means something; a threshold should keep a good share;
- `flat_at_target`: 0.80 at every confidence for target 0.8 — every threshold sits exactly on the boundary;
- `just_below`: the whole population agrees 0.78, 0.79 at the top — any kept set misses a target of 0.8;
- `overconfident`: 60% of items at confidence 1.0 agreeing 0.83, the rest 0.4 — the top barely clears 0.8.

    .venv/bin/python bench/cascade_mc.py                 # 2,000 draws per scenario; writes bench/results/
    .venv/bin/python bench/cascade_mc.py --draws 200 --out /tmp/x
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from scoregate.analysis.cascade import choose_threshold  # noqa: E402

CONFIDENCES = np.array([0.2, 0.4, 0.6, 0.8, 1.0])
POPULATIONS: dict[str, tuple[list[float], list[float]]] = {
    "calibrated": ([0.2] * 5, [0.50, 0.62, 0.74, 0.86, 0.97]),
    "flat_at_target": ([0.2] * 5, [0.80] * 5),
    "just_below": ([0.2] * 5, [0.77, 0.78, 0.78, 0.78, 0.79]),
    "overconfident": ([0.1, 0.1, 0.1, 0.1, 0.6], [0.40, 0.40, 0.40, 0.40, 0.83]),
}
"""Name → (share of items at each confidence, agreement at each confidence)."""
SIZES = (30, 100, 300, 1000)
SETTINGS = ((0.8, 0.1), (0.8, 0.05), (0.7, 0.1))
"""(target, δ) pairs."""


def realised(weights: np.ndarray, agreement: np.ndarray, threshold: float) -> float:
    """The population's agreement on the items at or above `threshold`."""
    kept = threshold - 1e-12 <= CONFIDENCES
    return float((weights[kept] * agreement[kept]).sum() / weights[kept].sum())


def scenario(rng: np.random.Generator, name: str, n: int, target: float, delta: float, draws: int) -> dict[str, Any]:
    """Run `draws` calibration draws of one scenario; return the failure and abstention rates and the share kept."""
    weights, agreement = (np.array(v) for v in POPULATIONS[name])
    failures = abstained = 0
    kept_shares = []
    for _ in range(draws):
        at = rng.choice(len(CONFIDENCES), size=n, p=weights / weights.sum())
        agree = rng.random(n) < agreement[at]
        choice = choose_threshold(CONFIDENCES[at].tolist(), agree.tolist(), target=target, delta=delta)
        if choice.threshold is None:
            abstained += 1
            kept_shares.append(0.0)
            continue
        kept_shares.append(float(weights[choice.threshold - 1e-12 <= CONFIDENCES].sum() / weights.sum()))
        failures += realised(weights, agreement, choice.threshold) < target
    return {
        "population": name, "n": n, "target": target, "delta": delta, "draws": draws,
        "failure_rate": failures / draws, "abstain_rate": abstained / draws,
        "mean_share_kept": float(np.mean(kept_shares)), "holds": failures / draws <= delta,
    }  # fmt: skip


def table(rows: list[dict[str, Any]]) -> str:
    """The results as a markdown table."""
    lines = [
        "| population | n labels | target | δ | failures (realised < target) | abstained | mean share kept | holds |",
        "| --- | --: | --: | --: | --: | --: | --: | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['population']} | {r['n']} | {r['target']} | {r['delta']} | {r['failure_rate']:.2%} | "
            f"{r['abstain_rate']:.1%} | {r['mean_share_kept']:.1%} | {'yes' if r['holds'] else '**no**'} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    rows = [
        scenario(rng, name, n, target, delta, args.draws)
        for name in POPULATIONS
        for n in SIZES
        for target, delta in SETTINGS
        if not (name == "flat_at_target" and target != 0.8)
    ]
    elapsed = time.perf_counter() - started
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout
    record = {
        "bench": "cascade_mc", "draws": args.draws, "seed": args.seed, "seconds": round(elapsed, 1),
        "commit": commit.strip(), "machine": platform.platform(), "python": platform.python_version(),
        "all_hold": all(r["holds"] for r in rows), "worst_failure_rate": max(r["failure_rate"] for r in rows),
        "rows": rows,
    }  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cascade_mc.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (args.out / "cascade_mc.md").write_text(table(rows), encoding="utf-8")
    print(table(rows))
    print(f"all hold: {record['all_hold']}; worst failure rate {record['worst_failure_rate']:.2%}; {elapsed:.0f} s")
    if not record["all_hold"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
