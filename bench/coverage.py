"""`scoregate coverage`'s measure on 10,000 traces against 1,000 items: time and peak memory, as a ratio to the bare
rapidfuzz call over the same texts in the same run.

Synthetic texts in the shape `coverage` compares (a mapped input's JSON: a title and a transcript of about 60
words, ~450 characters), seeded: 1,000 items; 10,000 traces, of which 30% are an item with a few words changed
(covered), 40% fall into 40 topics of their own (uncovered clusters) and 30% are unlike anything. Three variants,
each in a fresh interpreter reading the same file, interleaved over the repeats:

  load        read the texts and import rapidfuzz and numpy (the floor of memory)
  reference   `rapidfuzz.process.cdist(traces, items, scorer=fuzz.ratio, dtype=uint8, workers=-1)` whole, then the
              max per trace: the library call alone, no clusters
  scoregate   `scoregate.app.coverage_measure.coverage_of(traces, items, 90)`: blocks of 1,000 traces, the
              covered count and the clusters of the uncovered traces

Targets (issue 29, item 4): under 30 s and under 300 MB on 2 cores. Writes bench/results/coverage.{json,md}.

    .venv/bin/python bench/coverage.py [--repeats 3] [--traces 10000] [--items 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LOAD = (
    "import json, resource, sys\nimport numpy\nfrom rapidfuzz import fuzz, process\n"
    "data = json.load(open(sys.argv[1]))\ntraces, items = data['traces'], data['items']\n"
)
PEAK = "print(json.dumps({'peak_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 'out': out}))\n"
VARIANTS = {
    "load": LOAD + "out = len(traces)\n" + PEAK,
    "reference": LOAD
    + "m = process.cdist(traces, items, scorer=fuzz.ratio, dtype=numpy.uint8, workers=-1)\n"
    + "out = int((m.max(axis=1) >= 90).sum())\n"
    + PEAK,
    "scoregate": LOAD
    + "from scoregate.app.coverage_measure import coverage_of\nr = coverage_of(traces, items, 90)\n"
    + "out = [r.covered, len(r.clusters)]\n"
    + PEAK,
}
TARGET_S, TARGET_MB = 30.0, 300.0


def _text(rng: random.Random, words: list[str], n: int) -> str:
    return " ".join(rng.choice(words) for _ in range(n))


def _input(title: str, transcript: str) -> str:
    return json.dumps({"title": title, "transcript": transcript}, sort_keys=True)


def make_data(traces: int, items: int, seed: int = 0) -> dict[str, list[str]]:
    """Items and traces as coverage compares them (canonical JSON of the mapped input)."""
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(5000)]
    parts = [(_text(rng, words, 8), _text(rng, words, 60)) for _ in range(items)]
    topics = [(_text(rng, words, 8), _text(rng, words, 60)) for _ in range(40)]
    out = []
    for n in range(traces):
        kind = n % 10
        title, transcript = rng.choice(parts) if kind < 3 else rng.choice(topics) if kind < 7 else (None, None)
        if title is None or transcript is None:
            out.append(_input(_text(rng, words, 8), _text(rng, words, 60)))
            continue
        changed = transcript.split()
        for _ in range(3):
            changed[rng.randrange(len(changed))] = rng.choice(words)
        out.append(_input(title, " ".join(changed)))
    return {"items": [_input(t, s) for t, s in parts], "traces": out}


def run_variant(code: str, data: Path) -> dict[str, Any]:
    """Wall seconds, peak MB and the answer of one fresh interpreter running `code` on the data file."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(data)], check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return {"wall_s": wall, "peak_mb": answer["peak_mb"], "out": answer["out"]}


def markdown(result: dict[str, Any]) -> str:
    """The results as the page under bench/results/."""
    rows = "\n".join(
        f"| {name} | {m['wall_s']:.2f} s | {m['peak_mb']:.0f} MB | {result['ratio_to_reference'][name]['wall']:.2f} | "
        f"{result['ratio_to_reference'][name]['peak']:.2f} |"
        for name, m in result["median"].items()
    )
    return (
        f"# coverage: {result['traces']:,} traces against {result['items']:,} items\n\n"
        f"{result['when']}, {result['machine']}, {result['cores']} cores, load average before "
        f"{result['load_before']}, after {result['load_after']}; medians of {result['repeats']} interleaved repeats, "
        "each variant a fresh interpreter.\n\n"
        "| variant | wall | peak memory | wall / reference | memory / reference |\n| --- | --- | --- | --- | --- |\n"
        f"{rows}\n\n"
        f"scoregate: covered {result['answer']['scoregate'][0]:,} traces, "
        f"{result['answer']['scoregate'][1]} clusters; the reference counts {result['answer']['reference']:,} "
        f"covered. Targets: under {TARGET_S:g} s ({result['verdict']['time']}) and under {TARGET_MB:g} MB "
        f"({result['verdict']['memory']}).\n"
    )


def main() -> None:
    """Run the variants interleaved; write bench/results/coverage.json and .md."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--items", type=int, default=1_000)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    load_before = round(os.getloadavg()[0], 2)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "texts.json"
        data.write_text(json.dumps(make_data(args.traces, args.items)), encoding="utf-8")
        for repeat in range(args.repeats):
            names = list(VARIANTS)
            for name in names[repeat % len(names) :] + names[: repeat % len(names)]:
                runs[name].append(run_variant(VARIANTS[name], data))
    median = {
        name: {
            "wall_s": statistics.median(r["wall_s"] for r in rows),
            "peak_mb": statistics.median(r["peak_mb"] for r in rows),
        }
        for name, rows in runs.items()
    }
    ref = median["reference"]
    ours = median["scoregate"]
    result = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": platform.platform(),
        "cores": os.cpu_count(),
        "load_before": load_before,
        "load_after": round(os.getloadavg()[0], 2),
        "repeats": args.repeats,
        "traces": args.traces,
        "items": args.items,
        "runs": runs,
        "median": median,
        "ratio_to_reference": {
            name: {"wall": m["wall_s"] / ref["wall_s"], "peak": m["peak_mb"] / ref["peak_mb"]}
            for name, m in median.items()
        },
        "answer": {"reference": runs["reference"][0]["out"], "scoregate": runs["scoregate"][0]["out"]},
        "verdict": {
            "time": "holds" if ours["wall_s"] < TARGET_S else "missed",
            "memory": "holds" if ours["peak_mb"] < TARGET_MB else "missed",
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "coverage.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (args.out / "coverage.md").write_text(markdown(result), encoding="utf-8")
    print(markdown(result))


if __name__ == "__main__":
    main()
