"""SummEval with scripted judges of known error rates, for `scoregate calibrate --corrected-labels`.

Reads the SummEval expert ratings (`summeval_rouge_scores.jsonl`: 1,600 summaries, each rated 1-5 by three experts;
`human.relevance` is their mean) and writes them with two scripted judges of relevance:

- `judge_1_5`: the rounded expert mean, one point higher (at most 5) with probability 0.6 — a lenient 1-5 judge;
- `judge_pass`: passes a summary the experts rate 4 or more (`human_pass` = 1) with probability 0.9 (sensitivity)
  and one they rate lower with probability 0.3 (specificity 0.7) — the error rates of the paper's example.

The same rule as `tests/cli/test_calibrate_corrected.py`'s `scripted_judge` (seed 31). The output goes where
`--out` says (default: summeval_judged.jsonl at the repository root, which git ignores: the data is not committed).

    .venv/bin/python bench/summeval_scripted_judge.py
    scoregate calibrate --file summeval_judged.jsonl --judge-key judge_1_5 --human-key human.relevance \\
        --corrected-labels 200
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SUMMEVAL = REPO.parent / "shared" / "data" / "summeval" / "summeval_rouge_scores.jsonl"


def write(source: Path, out: Path, seed: int = 31) -> int:
    """Write `source`'s records with the scripted judges to `out`; return how many."""
    rng = np.random.default_rng(seed)
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            human = row["human"]["relevance"]
            passed = human >= 4
            row["judge_1_5"] = float(min(5, int(np.floor(human + 0.5)) + (rng.random() < 0.6)))
            row["human_pass"] = float(passed)
            row["judge_pass"] = float(rng.random() < (0.9 if passed else 0.3))
            handle.write(json.dumps(row) + "\n")
    return len(rows)


def main() -> None:
    """Parse the options and write the file."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summeval", type=Path, default=SUMMEVAL)
    parser.add_argument("--out", type=Path, default=REPO / "summeval_judged.jsonl")
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()
    print(f"{write(args.summeval, args.out, args.seed)} records → {args.out}")


if __name__ == "__main__":
    main()
