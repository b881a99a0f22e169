"""Bench: the HTML report of a 10,000-item run — its size, the time to write it, and the time headless
Chromium takes to open it (load + the item table drawn), plus one free-text filter over all items.

The run: a real six-item summarization run (scoregate against the scripted OpenAI-compatible server of
the tests: real transcripts, summaries, judge reasoning, call telemetry), whose items are repeated under new
ids to N items with varied scores, outputs and latencies (fixed seed); its summary and gates are then
computed by scoregate's own `summarize_run`. Targets: under 15 MB, opened in under 3 s.

    PYTHONPATH=src .venv/bin/python bench/report_size.py            # 10,000 items, 3 opens
    PYTHONPATH=src .venv/bin/python bench/report_size.py --items 500 --out /tmp/x
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


from scoregate.app.run.experiment import RunOptions, run_experiment  # noqa: E402
from scoregate.app.run.summary import summarize_run  # noqa: E402
from scoregate.catalog.plan import plan_experiment  # noqa: E402
from scoregate.report import write_run_report  # noqa: E402
from scoregate.store.records import ItemResult  # noqa: E402
from scoregate.store.run_store import RunStore  # noqa: E402
from scoregate.tracks.project import load_project  # noqa: E402
from support.headless_chromium import Chromium, find_chromium  # noqa: E402
from support.report_runs import summarization_project  # noqa: E402
from support.scripted_openai import ScriptedOpenAI  # noqa: E402

SIZE_LIMIT_MB, OPEN_LIMIT_S = 15.0, 3.0
WORDS = ["latency", "budget", "release", "roadmap", "migration", "pricing", "outage", "benchmark", "license"]


def varied(result: ItemResult, n: int, rng: random.Random) -> ItemResult:
    """A copy of `result` as item n: new id, a sentence more or less in the output, other scores and latency."""
    row = result.to_json_dict()
    row = json.loads(json.dumps(row))
    row["index"], row["item_id"] = n, f"{result.item_id}-{n:05d}"
    extra = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 25)))
    if isinstance(row["output"], str):
        row["output"] = row["output"] + ("\nAlso: " + extra if extra else "")
    for score in row["scores"]:
        value = score["value"]
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float) and score["name"].endswith("_score"):
            score["value"] = rng.choice([2, 3, 4, 4, 5, 5, 5])
        elif isinstance(value, int) and score["name"] == "word_count":
            score["value"] = value + len(extra.split())
    for call in row["calls"]:
        call["latency_ms"] = round(rng.lognormvariate(6.0, 0.5), 1)
    if rng.random() < 0.01:
        row["error"] = "model call failed: HTTP 503 after 3 retries"
    return ItemResult.from_json_dict(row)


def make_run(base: Path, items: int) -> tuple[Path, RunStore]:
    """A real six-item run, then its items repeated to `items` and summarised by scoregate."""
    server = ScriptedOpenAI()
    try:
        project = summarization_project(base / "project", server)
        seed = run_experiment(
            project, "smoke", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
        )
    finally:
        server.close()
    source = sorted(seed.store.iter_results(), key=lambda r: r.index)
    manifest = {**seed.store.manifest, "run_id": "bench-10k"}
    store = RunStore.create(project / "runs", "bench-10k", manifest)
    rng = random.Random(7)
    for n in range(items):
        store.append(varied(source[n % len(source)], n, rng))
    store.close()
    loaded = load_project(project)
    summarize_run(store, plan_experiment(loaded, "smoke"), loaded)
    return project, store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--opens", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        sys.exit("no chromium: apt-get install -y chromium")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="scoregate-report-bench-") as tmp:
        _, store = make_run(Path(tmp), args.items)
        start = time.perf_counter()
        path = write_run_report(store)
        write_s = time.perf_counter() - start
        size_mb = path.stat().st_size / 1e6
        opens, filters = [], []
        with Chromium(chromium) as browser:
            for _ in range(args.opens):
                opens.append(browser.open(path))
                start = time.perf_counter()
                shown = browser.evaluate(
                    "(() => { const q = document.getElementById('filter-text'); q.value = 'smoke-002-';"
                    " q.dispatchEvent(new Event('input'));"
                    " return document.getElementById('item-count').textContent; })()"
                )
                filters.append(time.perf_counter() - start)
            errors = list(browser.errors)
            browser.screenshot(args.out / "report-10k.png", full_page=False)
    result: dict[str, Any] = {
        "items": args.items,
        "size_mb": round(size_mb, 2),
        "write_s": round(write_s, 2),
        "open_s_median": round(statistics.median(opens), 3),
        "open_s_all": [round(s, 3) for s in opens],
        "filter_s_median": round(statistics.median(filters), 3),
        "filter_shown": shown,
        "console_errors": errors,
        "size_ok": size_mb < SIZE_LIMIT_MB,
        "open_ok": statistics.median(opens) < OPEN_LIMIT_S,
        "chromium": chromium,
    }
    (args.out / "report_size.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
