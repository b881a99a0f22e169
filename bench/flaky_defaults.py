"""Benchmark: which `settings.flaky` defaults (threshold, min_observations) mark an item flaky under a stochastic judge.

A simulated judge gives each item a verdict on an `every_item` gate that is a coin: the item fails with its own
probability q on every observation (a run or a repeat), independently. Three kinds of items:

- a *real failure* (q 0.9, 0.95): the item breaks the rule almost every time; the gate should fail on it, so
  quarantining it hides a real failure (**false quarantine**);
- a *flaky* item (q 0.3, 0.5, 0.7): its verdict is chance; the gate fails or passes on it at random, so not
  quarantining it is a **miss**;
- *rare noise* (q 0.05): almost always passes; quarantining it costs coverage, nothing else.

For each rule (flaky when flips / comparisons > threshold with at least min_observations observations) and each
history length n (observations of the item so far: runs × repeats within `window_runs`), the share of items marked
flaky, over `--items` simulated items per cell. The rule is the one a run uses: a sample of every cell is
checked against `scoregate.analysis.flaky.flaky_items`.

    .venv/bin/python bench/flaky_defaults.py                     # 20,000 items per cell, writes bench/results/
    .venv/bin/python bench/flaky_defaults.py --items 2000 --out /tmp/x
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

from scoregate.analysis.flaky import GateRule, Observation, flaky_items  # noqa: E402

REAL_FAILURES = (0.9, 0.95)
FLAKY = (0.3, 0.5, 0.7)
RARE_NOISE = (0.05,)
HISTORIES = (3, 4, 5, 6, 8, 10, 15, 20)
THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.5)
MIN_OBSERVATIONS = (3, 4, 5, 6, 8, 10)
RULE = GateRule("g", "x", "<=", 0)  # value 1 breaks it
CHECKED = 300
"""Items per (q, n) checked against the shipped rule, `flaky_items`."""
HIDE_LIMITS = {0.95: 0.05, 0.9: 0.15}
"""The chosen rule may hide a real failure failing with probability q in at most this share of items, at every
history length: no flip-counting rule keeps a q 0.9 item under 5% at 8 to 20 observations (one lucky pass between
failures is two flips), and a kept-out item that broke the rule in the evidence run still blocks a promotion
(`settings.flaky.promotion: refuse_if_breaking`)."""


def _histories(rng: np.random.Generator, q: float, n: int, items: int) -> np.ndarray:
    """`items` verdict histories of n observations each (1 = the item broke the rule), failing with probability q."""
    return (rng.random((items, n)) < q).astype(np.int8)


def _flip_rates(histories: np.ndarray) -> np.ndarray:
    """Flips / comparisons of each history (consecutive observations under the same conditions)."""
    flips = np.abs(np.diff(histories, axis=1)).sum(axis=1)
    return flips / (histories.shape[1] - 1)


def _check_against_the_shipped_rule(histories: np.ndarray, threshold: float, min_observations: int) -> None:
    """The vectorised rule marks exactly the items `scoregate.analysis.flaky.flaky_items` marks."""
    sample = histories[:CHECKED]
    mine = set(np.flatnonzero((_flip_rates(sample) > threshold) & (sample.shape[1] >= min_observations)))
    shipped = flaky_items(
        (
            (RULE, str(i), [Observation(f"r{k}", 1, "c", float(v)) for k, v in enumerate(row)])
            for i, row in enumerate(sample)
        ),
        threshold=threshold,
        min_observations=min_observations,
    )
    assert {int(f.item_id) for f in shipped} == mine, (threshold, min_observations)


def simulate(items: int, seed: int) -> dict[str, Any]:
    """Every cell: the share of items marked flaky per (q, n, threshold, min_observations)."""
    rng = np.random.default_rng(seed)
    qs = (*REAL_FAILURES, *FLAKY, *RARE_NOISE)
    marked: dict[str, Any] = {}
    for q in qs:
        for n in HISTORIES:
            histories = _histories(rng, q, n, items)
            rates = _flip_rates(histories)
            for threshold in THRESHOLDS:
                for m in MIN_OBSERVATIONS:
                    share = float(((rates > threshold) & (n >= m)).mean()) if n >= m else 0.0
                    marked[f"{q}|{n}|{threshold}|{m}"] = share
                    _check_against_the_shipped_rule(histories, threshold, m)
    return marked


def _rule_rows(marked: dict[str, Any]) -> list[dict[str, Any]]:
    """Per rule: its worst false-quarantine rate (q 0.9 and 0.95, any n) and its miss rates (flaky items) per n."""
    rows = []
    for threshold in THRESHOLDS:
        for m in MIN_OBSERVATIONS:

            def share(q: float, n: int, t: float = threshold, k: int = m) -> float:
                return float(marked[f"{q}|{n}|{t}|{k}"])

            rows.append({
                "threshold": threshold, "min_observations": m,
                "hides_q90": max(share(0.9, n) for n in HISTORIES),
                "hides_q95": max(share(0.95, n) for n in HISTORIES),
                "misses_q50": {n: 1 - share(0.5, n) for n in HISTORIES},
                "misses_q30": {n: 1 - share(0.3, n) for n in HISTORIES},
                "misses_q70": {n: 1 - share(0.7, n) for n in HISTORIES},
                "rare_noise_q05": max(share(0.05, n) for n in HISTORIES),
            })  # fmt: skip
    return rows


def choose(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Of the rules within HIDE_LIMITS at every n, the one that misses the fewest flaky items at q 0.5 (n 10, then 20),
    then at q 0.3; ties go to the lower min_observations."""
    allowed = [r for r in rows if r["hides_q95"] <= HIDE_LIMITS[0.95] and r["hides_q90"] <= HIDE_LIMITS[0.9]]
    return min(
        allowed,
        key=lambda r: (r["misses_q50"][10], r["misses_q50"][20], r["misses_q30"][10], r["misses_q30"][20],
                       r["min_observations"]),
    )  # fmt: skip


def _pct(x: float) -> str:
    return f"{x:.1%}"


def markdown(result: dict[str, Any]) -> str:
    """The results as the markdown page under bench/results/."""
    rows, chosen, old = result["rules"], result["chosen"], result["previous_default"]
    head = (
        "# Flaky-item defaults: a simulated stochastic judge\n\n"
        f"`python bench/flaky_defaults.py` — {result['items']:,} simulated items per cell, seed {result['seed']}, "
        f"{result['seconds']:.0f} s, commit {result['commit']}. Each item fails an `every_item` gate with its own "
        "probability q on every observation, independently; an item is marked flaky when flips / comparisons > "
        "threshold with at least min_observations observations (the shipped rule, checked on a sample of every "
        "cell). *Hides* = share of real failures (q 0.9, 0.95) marked flaky, the worst over histories of "
        f"{', '.join(map(str, HISTORIES))} observations; *misses* = share of flaky items (q 0.3, 0.5, 0.7) not "
        "marked, after n observations.\n\n"
    )
    lines = [
        "| threshold | min obs | hides q 0.9 | hides q 0.95 | misses q 0.5 (n 5 / 10 / 20) "
        "| misses q 0.3 (n 5 / 10 / 20) | marks q 0.05 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        tag = " **chosen**" if r is chosen else " (old default)" if r is old else ""
        q50 = " / ".join(_pct(r["misses_q50"][n]) for n in (5, 10, 20))
        q30 = " / ".join(_pct(r["misses_q30"][n]) for n in (5, 10, 20))
        lines.append(
            f"| {r['threshold']:g}{tag} | {r['min_observations']} | {_pct(r['hides_q90'])} | {_pct(r['hides_q95'])} "
            f"| {q50} | {q30} | {_pct(r['rare_noise_q05'])} |"
        )
    verdict = (
        f"\n\nChosen: threshold **{chosen['threshold']:g}**, min_observations **{chosen['min_observations']}** — "
        f"of the rules that hide a real failure in at most {HIDE_LIMITS[0.95]:.0%} (q 0.95) and "
        f"{HIDE_LIMITS[0.9]:.0%} (q 0.9) of items at every history length, the one that misses the fewest flaky "
        f"items at 10, then 20 observations. The old default (threshold {old['threshold']:g}, "
        f"min_observations {old['min_observations']}) hides a q 0.9 failure in {_pct(old['hides_q90'])} of items "
        f"(one flip in three observations marks an item).\n"
    )
    return head + "\n".join(lines) + verdict


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def main() -> None:
    """Run the simulation and write bench/results/flaky_defaults.{json,md}."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000, help="simulated items per cell")
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    started = time.perf_counter()
    marked = simulate(args.items, args.seed)
    rows = _rule_rows(marked)
    chosen = choose(rows)
    old = next(r for r in rows if (r["threshold"], r["min_observations"]) == (0.2, 3))
    result = {
        "items": args.items, "seed": args.seed, "seconds": time.perf_counter() - started, "commit": _commit(),
        "python": platform.python_version(), "numpy": np.__version__,
        "hide_limits": {str(q): v for q, v in HIDE_LIMITS.items()},
        "rules": rows, "chosen": chosen, "previous_default": old, "marked": marked,
    }  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "flaky_defaults.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (args.out / "flaky_defaults.md").write_text(markdown(result), encoding="utf-8")
    print(f"chosen: threshold {chosen['threshold']:g}, min_observations {chosen['min_observations']}")
    print(f"wrote {args.out / 'flaky_defaults.md'}")


if __name__ == "__main__":
    main()
