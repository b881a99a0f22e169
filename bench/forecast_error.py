"""Forecast vs actual: how far `scoregate run EXPERIMENT --dry-run` lands from the run that follows it.

For each experiment, in a fresh copy of the shipped project (its own runs/ and response cache):

1. `run` once (cache on, so it fills the cache): the past the forecast reads;
2. `run --dry-run --json`, then `run --no-cache`: forecast vs an uncached run;
3. `run --dry-run --json`, then `run` (cache on, every reply cached by step 1): forecast vs a cached run.

Actual figures come from the run's `metrics.json` (the calls of its items, cache hits included as calls; tokens and
cost of the calls that were not cache hits, as the forecast counts them); actual wall time is the span of the item
calls (first call's start to last call's end), what the forecast's wall time stands for.

    .venv/bin/python bench/forecast_error.py --model local    # the embedded model (`scoregate model serve`)
    .venv/bin/python bench/forecast_error.py --model scripted --latency-ms 40    # priced like gpt-4o-mini

Results: bench/results/forecast.json and bench/results/forecast.md (appended per model).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent / "scoregate"
RESULTS = REPO / "bench" / "results"
CANNED = "## TL;DR\nA canned summary.\n\n## Key points\n- one\n- two"
"""provider: scripted's reply to a task request (judges get JSON generated from their schema)."""
FIGURES = ("calls", "tokens_in", "tokens_out", "cost_usd", "wall_s")


def _project(root: Path, model: str, latency_ms: float) -> None:
    for folder in ("prompts", "evaluators", "datasets"):
        shutil.copytree(REPO / folder, root / folder)
    config = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))
    if model == "scripted":
        config["models"]["scripted"] = {
            "provider": "scripted",
            "model": "scripted-1",
            "input_cost_per_mtok": 0.15,
            "output_cost_per_mtok": 0.60,
            "max_connections": 4,
            "options": {"default": CANNED, "latency_ms": latency_ms},
        }
        config["settings"]["model"] = config["settings"]["judge_model"] = "scripted"
    (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(BIN), *args, "-C", str(root)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"scoregate {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def _run(root: Path, experiment: str, *extra: str) -> str:
    done = _cli(root, "run", experiment, "--no-mlflow", "--no-langfuse", "--no-report", "--json", *extra)
    return str(json.loads(done.stdout)["run_id"])


def _actual(root: Path, run_id: str) -> dict[str, float]:
    rows = [r for r in json.loads((root / "runs" / run_id / "metrics.json").read_text())["rows"] if r["item_id"]]
    fresh = [r for r in rows if not r["cache_hit"]]
    starts = [datetime.fromisoformat(r["timestamp"]).timestamp() for r in rows]
    ends = [s + (r["duration_ms"] or 0) / 1000 for s, r in zip(starts, rows, strict=True)]
    return {
        "calls": len(rows),
        "tokens_in": sum(r["tokens_prompt"] or 0 for r in fresh),
        "tokens_out": sum(r["tokens_completion"] or 0 for r in fresh),
        "cost_usd": sum(r["cost_usd"] or 0 for r in fresh),
        "wall_s": max(ends) - min(starts),
    }


def _compare(forecast: dict[str, Any], actual: dict[str, float]) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for name in FIGURES:
        figure = forecast[name] if name != "calls" else {"expected": forecast["calls"]}
        if figure is None:
            rows[name] = {"actual": actual[name], "expected": None, "note": "not forecast"}
            continue
        expected = figure["expected"]
        error = (expected - actual[name]) / actual[name] if actual[name] else None
        inside = figure["low"] <= actual[name] <= figure["high"] if "low" in figure else None
        rows[name] = {**figure, "actual": actual[name], "relative_error": error, "inside_interval": inside}
    return rows


def measure(model: str, experiment: str, latency_ms: float) -> dict[str, Any]:
    """Forecast vs actual of `experiment` on `model`, uncached then cached."""
    with tempfile.TemporaryDirectory(prefix="forecast-bench-") as tmp:
        root = Path(tmp)
        _project(root, model, latency_ms)
        extra = ("--model", model) if model != "local" else ()
        past = _run(root, experiment, *extra)
        result: dict[str, Any] = {"model": model, "experiment": experiment, "past_run": past}
        if model == "scripted":
            result["latency_ms"] = latency_ms
        for case, flags in (("uncached", ("--no-cache",)), ("cached", ())):
            dry = _cli(root, "run", experiment, "--dry-run", "--json", *extra, *flags)
            forecast = json.loads(dry.stdout)
            run_id = _run(root, experiment, *extra, *flags)
            result[case] = {"basis": forecast["basis"], **_compare(forecast, _actual(root, run_id))}
        return result


def _markdown(result: dict[str, Any], command: str) -> str:
    latency = f", {result['latency_ms']:g} ms a reply" if "latency_ms" in result else ""
    title = f"### {result['experiment']} on `{result['model']}`{latency} ({datetime.now().date()})"
    lines = [title, "", f"`{command}`", ""]
    lines += ["| case | figure | expected | interval | actual | error | inside |", "|---|---|---|---|---|---|---|"]
    for case in ("uncached", "cached"):
        for name in FIGURES:
            row = result[case][name]
            if row.get("expected") is None:
                lines.append(f"| {case} | {name} | not forecast | | {row['actual']:.4g} | | |")
                continue
            interval = f"{row['low']:.4g} – {row['high']:.4g}" if "low" in row else ""
            error = f"{row['relative_error']:+.1%}" if row.get("relative_error") is not None else "n/a"
            inside = {True: "yes", False: "no", None: ""}[row.get("inside_interval")]
            lines.append(
                f"| {case} | {name} | {row['expected']:.4g} | {interval} | {row['actual']:.4g} | {error} | {inside} |"
            )
    return "\n".join(lines) + "\n\n"


def main() -> None:
    """Measure and record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("local", "scripted"), default="scripted")
    parser.add_argument("--experiments", default="smoke", help="comma-separated shipped experiments")
    parser.add_argument("--latency-ms", type=float, default=40.0, help="provider: scripted's wait per reply")
    args = parser.parse_args()
    command = "python bench/forecast_error.py " + " ".join(sys.argv[1:])
    RESULTS.mkdir(parents=True, exist_ok=True)
    store = RESULTS / "forecast.json"
    recorded = json.loads(store.read_text()) if store.exists() else []
    for experiment in args.experiments.split(","):
        result = measure(args.model, experiment, args.latency_ms)
        result["command"] = command
        same = (args.model, experiment, result.get("latency_ms"))
        recorded = [r for r in recorded if (r["model"], r["experiment"], r.get("latency_ms")) != same] + [result]
        with (RESULTS / "forecast.md").open("a", encoding="utf-8") as out:
            out.write(_markdown(result, command))
        print(_markdown(result, command))
    store.write_text(json.dumps(recorded, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
