"""Benchmark: does the planned split of the next human labels shorten the corrected pass rate's interval, and does
the per-judged-class interval cover the truth?

A simulated pass/fail judge on N = 1,000 items: a share p of them judged pass; a human passes an item judged j with
probability aⱼ. A pilot of `pilot` labels drawn at random is followed by `more` labels, split either as
`scoregate.analysis.label_allocation.allocate` plans from the pilot, or at random (as the run is split). For each of
`--draws` simulated datasets per scenario, the corrected pass rate θ̂ = p̂·â₁ + (1 − p̂)·â₀ and its 95% interval
(`corrected`) after all labels; recorded: the coverage of the true θ (= p·a₁ + (1 − p)·a₀ of the simulated items) and
the mean interval width of each split.

    .venv/bin/python bench/label_allocation_mc.py               # 2,000 draws per scenario; writes bench/results/
    .venv/bin/python bench/label_allocation_mc.py --draws 200 --out /tmp/x
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from scoregate.analysis.label_allocation import JudgedClass, allocate, corrected  # noqa: E402

ITEMS = 1000
SCENARIOS = (
    # (p judged pass, a1 human pass | judged pass, a0 human pass | judged fail, pilot, more)
    (0.7, 0.9, 0.3, 40, 60),
    (0.7, 0.95, 0.5, 40, 60),
    (0.3, 0.8, 0.1, 40, 60),
    (0.5, 0.9, 0.1, 20, 100),
    (0.9, 0.85, 0.4, 60, 60),
)


def draw(rng: np.random.Generator, p: float, a1: float, a0: float, pilot: int, more: int) -> dict[str, Any]:
    """One simulated run: the interval after the planned and after a random split of `more` labels."""
    judged = rng.random(ITEMS) < p
    human = np.where(judged, rng.random(ITEMS) < a1, rng.random(ITEMS) < a0)
    truth = float(human.mean())
    order = rng.permutation(ITEMS)
    labelled = set(order[:pilot].tolist())
    rest = order[pilot:]

    def classes(chosen: set[int]) -> tuple[JudgedClass, JudgedClass]:
        ones = [i for i in chosen if judged[i]]
        zeros = [i for i in chosen if not judged[i]]
        share = float(judged.mean())
        return (
            JudgedClass(share, len(ones), int(human[ones].sum())),
            JudgedClass(1 - share, len(zeros), int(human[zeros].sum())),
        )

    plan = allocate(*classes(labelled), ITEMS, more)
    pool1 = [i for i in rest.tolist() if judged[i]]
    pool0 = [i for i in rest.tolist() if not judged[i]]
    planned = labelled | set(pool1[: plan.judged_pass]) | set(pool0[: plan.judged_fail])
    at_random = labelled | set(rest[:more].tolist())
    out: dict[str, Any] = {"truth": truth}
    for name, chosen in (("planned", planned), ("random", at_random)):
        found = corrected(*classes(chosen), ITEMS)
        if found.ci_low is None or found.ci_high is None:
            out[name] = None
            continue
        out[name] = (found.ci_low <= truth <= found.ci_high, found.ci_high - found.ci_low)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    rows = []
    for p, a1, a0, pilot, more in SCENARIOS:
        results = [draw(rng, p, a1, a0, pilot, more) for _ in range(args.draws)]
        row: dict[str, Any] = {"p": p, "a1": a1, "a0": a0, "pilot": pilot, "more": more, "draws": args.draws}
        for name in ("planned", "random"):
            got = [r[name] for r in results if r[name] is not None]
            row[f"{name}_coverage"] = sum(c for c, _ in got) / len(got)
            row[f"{name}_width"] = float(np.mean([w for _, w in got]))
            row[f"{name}_undefined"] = args.draws - len(got)
        row["width_ratio"] = row["planned_width"] / row["random_width"]
        rows.append(row)
    record = {
        "bench": "label_allocation_mc", "items": ITEMS, "draws": args.draws, "seed": args.seed,
        "seconds": round(time.perf_counter() - started, 1), "machine": platform.platform(), "rows": rows,
    }  # fmt: skip
    lines = [
        "| p | a1 | a0 | pilot + more | coverage planned | coverage random | width planned | width random | ratio |",
        "| --: | --: | --: | --: | --: | --: | --: | --: | --: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['p']} | {r['a1']} | {r['a0']} | {r['pilot']} + {r['more']} | {r['planned_coverage']:.1%} | "
            f"{r['random_coverage']:.1%} | {r['planned_width']:.4f} | {r['random_width']:.4f} | "
            f"{r['width_ratio']:.3f} |"
        )
    table = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "label_allocation_mc.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (args.out / "label_allocation_mc.md").write_text(table, encoding="utf-8")
    print(table)
    print(f"{record['seconds']} s")


if __name__ == "__main__":
    main()
