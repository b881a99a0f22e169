"""Benchmark: score 10,000 extraction outputs shaped like the shipped dataset, as a run does, in under 10 s.

The items cycle through datasets/extraction_v1.jsonl (its texts, schemas and references). Each output is JSON
text derived from the reference with seeded, realistic faults: most are exact, the rest have a typo, a
dropped or extra field, a number off by a few percent, a type confusion, an enum value outside the schema, or
are cut off (not JSON). Two phases are timed, both on exactly what `scoregate run` executes:

1. per item: `ExtractionEvaluator.score` (parse, validate, compare fields, the 16 scores);
2. run level: `ExtractionRunAggregator` over the stored results (re-score + micro aggregates + complexity
   analysis), which `summarize_run` adds to summary.json.

Two schema regimes: `shared` (the shipped dataset's 8 schemas, each compiled once) and `unique` (every item
carries its own schema object with distinct content, so nothing is reused: the worst case, e.g. a dataset
whose items each bring their own schema).

    .venv/bin/python bench/extraction_scoring.py               # 10,000 items, writes bench/results/
    .venv/bin/python bench/extraction_scoring.py --n 1000 --out /tmp/x
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from scoregate.catalog.datasets import iter_items  # noqa: E402
from scoregate.catalog.models import DatasetItem  # noqa: E402
from scoregate.scoring.base import EvalContext  # noqa: E402
from scoregate.store.records import CallRecord, ItemResult  # noqa: E402
from scoregate.tracks.extraction.kind import ExtractionEvaluator  # noqa: E402
from scoregate.tracks.extraction.metrics import clear_schema_cache  # noqa: E402
from scoregate.tracks.extraction.run_summary import ExtractionRunAggregator  # noqa: E402
from scoregate.tracks.extraction.spec import ExtractionSpec  # noqa: E402

TARGET_S = 10.0
FAULTS = (
    ("exact", 0.62),
    ("typo", 0.10),
    ("dropped_field", 0.06),
    ("extra_field", 0.05),
    ("number_off", 0.05),
    ("type_confusion", 0.04),
    ("enum_outside", 0.03),
    ("cut_off", 0.05),
)


def _leaf_paths(value: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaf_paths(v, (*prefix, k))]
    return [prefix]


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def _set(obj: Any, path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def faulty_output(item: DatasetItem, rng: random.Random) -> str:
    """Return the reference as JSON text with one seeded fault (or none)."""
    fault = rng.choices([f for f, _ in FAULTS], weights=[w for _, w in FAULTS])[0]
    out = json.loads(json.dumps(item.expected_output))
    paths = _leaf_paths(out)
    path = rng.choice(paths)
    value = _get(out, path)
    if fault == "typo" and isinstance(value, str) and len(value) > 2:
        i = rng.randrange(len(value))
        _set(out, path, value[:i] + "x" + value[i + 1 :])
    elif fault == "dropped_field" and len(path) >= 1:
        parent = _get(out, path[:-1]) if len(path) > 1 else out
        parent.pop(path[-1])
    elif fault == "extra_field":
        out["notes"] = "as discussed on the phone"
    elif fault == "number_off" and isinstance(value, int | float) and not isinstance(value, bool):
        _set(out, path, round(value * 1.04, 2))
    elif fault == "type_confusion" and isinstance(value, int | float) and not isinstance(value, bool):
        _set(out, path, str(value))
    elif fault == "enum_outside" and isinstance(value, str):
        _set(out, path, "unknown")
    text = json.dumps(out, ensure_ascii=False)
    return text[: len(text) // 2] if fault == "cut_off" else text


def build(n: int, unique_schemas: bool, seed: int) -> list[tuple[DatasetItem, str]]:
    """Return n (item, output text) pairs cycling through the shipped dataset."""
    shipped = [item for _, item in iter_items(REPO / "datasets" / "extraction_v1.jsonl")]
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        item = shipped[i % len(shipped)]
        if unique_schemas:
            schema = {**item.input["schema"], "$comment": f"benchmark item {i}"}
            item = item.model_copy(update={"id": f"{item.id}-{i}", "input": {**item.input, "schema": schema}})
        else:  # a fresh copy per item, as items parsed from a JSONL file are
            item = item.model_copy(update={"id": f"{item.id}-{i}", "input": json.loads(json.dumps(item.input))})
        pairs.append((item, faulty_output(item, rng)))
    return pairs


def run(n: int, unique_schemas: bool, seed: int) -> dict[str, Any]:
    """Time both phases over n items; return the timings and a few aggregates as a sanity check."""
    raw = yaml.safe_load((REPO / "evaluators" / "extraction_v1.yaml").read_text(encoding="utf-8"))
    evaluator = ExtractionEvaluator(ExtractionSpec.model_validate(raw))
    pairs = build(n, unique_schemas, seed)
    clear_schema_cache()
    started, cpu = time.perf_counter(), time.process_time()
    results = []
    for index, (item, output) in enumerate(pairs):
        ctx = EvalContext(item.id or "", item.input, output, item.expected_output, item.metadata, None)  # type: ignore[arg-type]
        scores = evaluator.score(ctx)
        call = CallRecord("task", "bench", "local", latency_ms=100.0 + index % 50, tokens_in=400, tokens_out=60)
        results.append(
            ItemResult(index, item.id or "", "extraction@1", item.input, output, item.expected_output,
                       item.metadata, scores=scores, calls=[call])
        )  # fmt: skip
    per_item_s, per_item_cpu = time.perf_counter() - started, time.process_time() - cpu
    clear_schema_cache()
    started, cpu = time.perf_counter(), time.process_time()
    aggregator = ExtractionRunAggregator(evaluator)
    for result in results:
        aggregator.add(result)
    report = aggregator.result(resamples=2000, wall_seconds=None)
    run_level_s, run_level_cpu = time.perf_counter() - started, time.process_time() - cpu
    m = report["metrics"]
    return {
        "items": n,
        "schemas": "unique per item" if unique_schemas else "shared (the shipped dataset's 8)",
        "per_item_scoring_s": round(per_item_s, 3),
        "run_level_aggregation_s": round(run_level_s, 3),
        "total_s": round(per_item_s + run_level_s, 3),
        "total_cpu_s": round(per_item_cpu + run_level_cpu, 3),
        "ms_per_item": round((per_item_s + run_level_s) / n * 1000, 3),
        "under_target": per_item_s + run_level_s < TARGET_S * n / 10_000,
        "check": {k: round(m[k], 4) for k in ("eqs", "schema_validity_rate", "field_f1_partial", "exact_match_rate")},
    }


def main() -> None:
    """Run both regimes and write bench/results/extraction_scoring.{json,md}."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--unique-n", type=int, default=1_000, help="items in the unique-schema regime")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args()
    rows = [run(args.n, False, args.seed), run(args.unique_n, True, args.seed)]
    machine = {"python": platform.python_version(), "platform": platform.platform(), "cpus": _cpus()}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "extraction_scoring.json").write_text(
        json.dumps({"target_s": TARGET_S, "machine": machine, "runs": rows}, indent=2) + "\n", encoding="utf-8"
    )
    lines = [
        f"# Extraction scoring (target: 10,000 items in under {TARGET_S:g} s)",
        "",
        f"Machine: {machine['platform']}, Python {machine['python']}, {machine['cpus']} CPUs (shared).",
        "",
        "| schemas | items | per-item scoring s | run-level aggregation s | total s (CPU s) | ms/item | "
        "on pace for target | EQS | F1 partial |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        c = r["check"]
        lines.append(
            f"| {r['schemas']} | {r['items']:,} | {r['per_item_scoring_s']} | {r['run_level_aggregation_s']} | "
            f"{r['total_s']} ({r['total_cpu_s']}) | {r['ms_per_item']} | {'yes' if r['under_target'] else 'NO'} | "
            f"{c['eqs']} | {c['field_f1_partial']} |"
        )
    (args.out / "extraction_scoring.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 0)


if __name__ == "__main__":
    main()
