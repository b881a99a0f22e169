"""Monte Carlo: does stop-early on the corrected difference keep its error at or below α with a look after every batch?

Each scenario draws `--datasets` (default 2,000) simulated datasets: a calibration set of `labels` items (half
human fails, half human passes) the judge rated, and a run of `--items` (default 3,000) items whose candidate and
reference outputs are each a human pass with probability θc and θr and which the judge rates with specificity q0
and sensitivity q1 (the error model of `scoregate.analysis.corrected_sequential`). The run is looked at after every
batch of `--batch` (default 10) items: 300 looks for 3,000 items.

The corrected stop uses the code a run uses: the Clopper–Pearson interval of Youden's J (`youden_bound`, α/2) and
the betting confidence sequence of the judged differences at α/2 (`analysis.sequential.crossings`, exactly the
decisions of the monitor a run feeds). At the non-inferiority boundary (Δθ = θc − θr = −margin) a dataset errs
when some look declares the candidate non-inferior (its corrected lower bound above −margin); `miss` counts the
datasets where some look's corrected interval excludes the true Δθ on either side. Both must stay ≤ α = 0.05.
Beside them, the raw stop-early rule on the judged differences (α, threshold −margin) at the same boundary: a
lenient or strict judge shrinks the judged difference by J, so the raw rule declares a true regression of the
margin non-inferior far more often than α.

    .venv/bin/python bench/corrected_sequential_mc.py                  # 2,000 datasets per scenario
    .venv/bin/python bench/corrected_sequential_mc.py --datasets 100 --out /tmp/mc   # smoke test

Results: bench/results/corrected_sequential_mc.json and bench/results/corrected_sequential_mc.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from scoregate.analysis.corrected_sequential import RUN_SHARE, YoudenBound, youden_bound
from scoregate.analysis.sequential import crossings

REPO = Path(__file__).resolve().parents[1]
ALPHA = 0.05
MARGIN = 0.1
THETA_REFERENCE = 0.7


@dataclass(frozen=True)
class Scenario:
    """A judge (specificity q0, sensitivity q1) and a calibration set of `labels` items."""

    name: str
    q0: float
    q1: float
    labels: int


SCENARIOS = [
    Scenario(f"{name}, {labels} labels", q0, q1, labels)
    for name, q0, q1 in (("lenient", 0.6, 0.95), ("strict", 0.95, 0.6), ("good", 0.9, 0.9))
    for labels in (30, 100, 500)
]


def _judged(rng: np.random.Generator, truth: np.ndarray, q0: float, q1: float) -> np.ndarray:
    """The judge's 0/1 verdicts of items whose human verdicts are `truth`."""
    u = rng.random(truth.shape)
    return np.where(truth == 1, u < q1, u >= q0).astype(float)


def run_scenario(s: Scenario, datasets: int, items: int, batch: int, seed: int) -> dict[str, Any]:
    """Simulate one scenario at the non-inferiority boundary; return its error rates."""
    rng = np.random.default_rng(seed)
    looks = list(range(batch, items + 1, batch))
    delta = -MARGIN
    reference = rng.random((datasets, items)) < THETA_REFERENCE
    candidate = rng.random((datasets, items)) < THETA_REFERENCE + delta
    d = _judged(rng, candidate.astype(float), s.q0, s.q1) - _judged(rng, reference.astype(float), s.q0, s.q1)
    m0 = m1 = s.labels // 2
    k0, k1 = rng.binomial(m0, s.q0, datasets), rng.binomial(m1, s.q1, datasets)
    declared = np.zeros(datasets, dtype=bool)
    missed = np.zeros(datasets, dtype=bool)
    refused = np.zeros(datasets, dtype=bool)
    for a, b in sorted(set(zip(k0.tolist(), k1.tolist(), strict=True))):
        rows = (k0 == a) & (k1 == b)
        bound = youden_bound(
            [0.0] * a + [1.0] * (m0 - a) + [1.0] * b + [0.0] * (m1 - b), [0.0] * m0 + [1.0] * m1,
            alpha=ALPHA * (1 - RUN_SHARE),
        )  # fmt: skip
        if not isinstance(bound, YoudenBound):
            refused[rows] = True  # the run would be refused before any call: no decision, no error
            continue
        alpha_run = ALPHA * RUN_SHARE
        # non-inferior declared: corrected lower bound > −margin  ⇔  L_t > −margin·J_lo
        above_margin, _ = crossings(d[rows], -MARGIN * bound.low, lo=-1, hi=1, alpha=alpha_run, looks=looks)
        declared[rows] = above_margin.any(axis=1)
        # the true Δθ (< 0) left out: L_t > Δθ·J_lo, or U_t < Δθ·J_hi
        above_truth, _ = crossings(d[rows], delta * bound.low, lo=-1, hi=1, alpha=alpha_run, looks=looks)
        _, below_truth = crossings(d[rows], delta * bound.high, lo=-1, hi=1, alpha=alpha_run, looks=looks)
        missed[rows] = above_truth.any(axis=1) | below_truth.any(axis=1)
    raw_above, _ = crossings(d, -MARGIN, lo=-1, hi=1, alpha=ALPHA, looks=looks)
    decided = datasets - int(refused.sum())
    return {
        **asdict(s),
        "youden": s.q0 + s.q1 - 1,
        "datasets": datasets,
        "refused": int(refused.sum()),
        "corrected_declared_noninferior": float(declared.sum() / decided) if decided else None,
        "corrected_interval_missed_truth": float(missed.sum() / decided) if decided else None,
        "raw_declared_noninferior": float(raw_above.any(axis=1).mean()),
    }


def _table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| scenario | J | refused (J_lo ≤ 0) | corrected: non-inferior declared | corrected: some look misses Δθ "
        "| raw: non-inferior declared |\n| --- | ---: | ---: | ---: | ---: | ---: |\n"
    )

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{x:.1%}"

    return head + "".join(
        f"| {r['name']} | {r['youden']:.2f} | {r['refused']} | {pct(r['corrected_declared_noninferior'])} | "
        f"{pct(r['corrected_interval_missed_truth'])} | {pct(r['raw_declared_noninferior'])} |\n"
        for r in rows
    )


def main(argv: list[str] | None = None) -> int:
    """Run every scenario, write the results, print the table; 1 when a corrected error rate exceeds α."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--datasets", type=int, default=2000)
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = [run_scenario(s, args.datasets, args.items, args.batch, args.seed + i) for i, s in enumerate(SCENARIOS)]
    record = {
        "benchmark": "corrected_sequential_mc",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "alpha": ALPHA, "margin": MARGIN, "theta_reference": THETA_REFERENCE, "items": args.items,
        "batch": args.batch, "looks": args.items // args.batch, "seconds": round(time.perf_counter() - started, 1),
        "scenarios": rows,
    }  # fmt: skip
    table = _table(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "corrected_sequential_mc.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (args.out / "corrected_sequential_mc.md").write_text(
        f"# Stop-early on the corrected difference: error with a look after every batch\n\n"
        f"{args.datasets} datasets per scenario, {args.items} run items, a look every {args.batch} items "
        f"({args.items // args.batch} looks), α = {ALPHA}, margin {MARGIN}, reference pass rate {THETA_REFERENCE}, "
        f"candidate at the boundary (Δθ = −{MARGIN}); run {record['when']} on {record['machine']} in "
        f"{record['seconds']} s (`bench/corrected_sequential_mc.py`).\n\n{table}",
        encoding="utf-8",
    )
    print(table)
    worst = max(
        max(r["corrected_declared_noninferior"] or 0.0, r["corrected_interval_missed_truth"] or 0.0) for r in rows
    )
    return 0 if worst <= ALPHA else 1


if __name__ == "__main__":
    sys.exit(main())
