"""What sharding costs on one box: `scoregate merge` of 100,000 items in 8 shards (wall time, peak RSS), and the
throughput of 4 shards × concurrency 8 against one process × 32 on the kit's 200 ms mock, in one invocation.

    .venv/bin/python bench/shards.py                      # records bench/results/shards.{json,md}
    .venv/bin/python bench/shards.py --merge-items 2000 --items 200 --repeats 1 --out /tmp/x   # smoke test

The merge's shards are real shard runs (`scoregate run w1 --shard I/8`) of an experiment with
`output_from: expected_output` (no model call: the 100,000 items are scored on their reference text), so the
merge reads what shards write. The throughput part needs the kit's nginx mock (port 18200 answers after 200 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from mock_endpoint import INSTALL_HINT, MockEndpoint, missing_packages
from scoregate_project import EXPERIMENT, generate_kit_data, write_project

REPO = Path(__file__).resolve().parents[1]
SCOREGATE = Path(sys.executable).parent / "scoregate"
MERGE_TARGET_S, MERGE_TARGET_MB = 20.0, 300.0


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    return {**env, "MLFLOW_TRACKING_URI": "", "COLUMNS": "200"}


def _start(args: list[str], project: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([str(SCOREGATE), *args, "-C", str(project)], stdout=out, stderr=out, env=_env())


def _wait(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    """Wait for a child; return its exit code, end time, peak RSS (MB) and CPU seconds from wait4."""
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return {
        "returncode": process.returncode,
        "ended": time.monotonic(),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
    }


def run_all(commands: list[list[str]], project: Path, log: Path) -> dict[str, Any]:
    """Start every command at once, wait for all; return the wall time (first start to last end) and peaks."""
    started = time.monotonic()
    children = [_start(c, project, log) for c in commands]
    ends = [_wait(c) for c in children]
    failed = [(" ".join(c), e["returncode"]) for c, e in zip(commands, ends, strict=True) if e["returncode"]]
    if failed:
        raise RuntimeError(f"failed: {failed}; see {log}")
    return {
        "wall_s": round(max(e["ended"] for e in ends) - started, 2),
        "peak_rss_mb": max(e["peak_rss_mb"] for e in ends),
        "cpu_s": round(sum(e["cpu_s"] for e in ends), 2),
    }


def merge_bench(kit: Path, work: Path, items: int, shards: int) -> dict[str, Any]:
    """Run `shards` real shards of `items` reference-scored items, then time and measure `scoregate merge`."""
    project = write_project(
        work / "merge-project", kit=kit, kit_data=generate_kit_data(kit, items, work / "kit-merge.jsonl"),
        n=items, port=18000, concurrency=32,
    )  # fmt: skip
    config_path = project / "scoregate.yaml"
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config["experiments"][EXPERIMENT]["output_from"] = "expected_output"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    log = work / "merge.log"
    shard_runs = [
        run_all(
            [["run", EXPERIMENT, "--shard", f"{i}/{shards}", "--run-id", "bench-merge", "--no-mlflow"]], project, log
        )
        for i in range(shards)
    ]  # one at a time: they are only the merge's input here
    merge = run_all([["merge", "bench-merge", "--no-mlflow", "--no-langfuse"]], project, log)
    summary = json.loads((project / "runs" / "bench-merge" / "summary.json").read_text(encoding="utf-8"))
    if summary["run_metrics"]["items"] != items:
        raise RuntimeError(f"the merged run holds {summary['run_metrics']['items']} items, not {items}")
    shards_s = sum(r["wall_s"] for r in shard_runs)
    return {
        "items": items,
        "shards": shards,
        "merge": merge,
        "merge_report_html": (project / "runs" / "bench-merge" / "report.html").is_file(),
        "shard_runs_wall_s_total": round(shards_s, 2),
        "merge_vs_shard_runs": round(merge["wall_s"] / shards_s, 3),
        "target": {"wall_s": MERGE_TARGET_S, "peak_rss_mb": MERGE_TARGET_MB},
        "met": merge["wall_s"] < MERGE_TARGET_S and merge["peak_rss_mb"] < MERGE_TARGET_MB,
    }


def throughput_bench(kit: Path, work: Path, items: int, repeats: int) -> dict[str, Any]:
    """One process × 32 vs 4 shards × 8 (then their merge), interleaved, on the 200 ms mock."""
    project = write_project(
        work / "tp-project", kit=kit, kit_data=generate_kit_data(kit, items, work / "kit-tp.jsonl"),
        n=items, port=18200, concurrency=32,
    )  # fmt: skip
    log = work / "throughput.log"
    rows: dict[str, list[dict[str, Any]]] = {
        "one_process_x32": [],
        "four_shards_x8": [],
        "four_shards_x8_and_merge": [],
    }
    for rep in range(repeats):
        one = run_all([["run", EXPERIMENT, "--no-cache", "--concurrency", "32", "--no-mlflow"]], project, log)
        rows["one_process_x32"].append({**one, "items_per_s": round(items / one["wall_s"], 1)})
        run_id = f"tp-{rep}"
        shards = run_all(
            [["run", EXPERIMENT, "--no-cache", "--concurrency", "8", "--shard", f"{i}/4", "--run-id", run_id,
              "--no-mlflow"] for i in range(4)],
            project, log,
        )  # fmt: skip
        merge = run_all([["merge", run_id, "--no-mlflow", "--no-langfuse"]], project, log)
        rows["four_shards_x8"].append({**shards, "items_per_s": round(items / shards["wall_s"], 1)})
        whole = shards["wall_s"] + merge["wall_s"]
        rows["four_shards_x8_and_merge"].append({"wall_s": round(whole, 2), "items_per_s": round(items / whole, 1)})
    median = {name: sorted(r["items_per_s"] for r in runs)[len(runs) // 2] for name, runs in rows.items()}
    return {
        "items": items,
        "mock_latency_s": 0.2,
        "repeats": repeats,
        "runs": rows,
        "median_items_per_s": median,
        "shards_vs_one_process": round(median["four_shards_x8"] / median["one_process_x32"], 3),
        "shards_and_merge_vs_one_process": round(median["four_shards_x8_and_merge"] / median["one_process_x32"], 3),
    }


def _markdown(result: dict[str, Any]) -> str:
    merge, tp = result["merge"], result["throughput"]
    lines = [
        "# Shards on one box (`bench/shards.py`)",
        "",
        f"Recorded {result['recorded_at']} on {result['machine']} (load average before: {result['load_before']}).",
        "",
        f"## Merge: {merge['items']:,} items in {merge['shards']} shards",
        "",
        "| wall s | peak RSS MB | CPU s | target | met | merge / the 8 shard runs' wall time |",
        "| ---: | ---: | ---: | --- | --- | ---: |",
        f"| {merge['merge']['wall_s']} | {merge['merge']['peak_rss_mb']} | {merge['merge']['cpu_s']} | "
        f"< {MERGE_TARGET_S:.0f} s, < {MERGE_TARGET_MB:.0f} MB | {'yes' if merge['met'] else 'NO'} | "
        f"{merge['merge_vs_shard_runs']} |",
        "",
        f"## Throughput: {tp['items']:,} items on the 200 ms mock, median of {tp['repeats']}",
        "",
        "| how | items/s | vs one process |",
        "| --- | ---: | ---: |",
        f"| one process, concurrency 32 | {tp['median_items_per_s']['one_process_x32']} | 1.0 |",
        f"| 4 shards × concurrency 8 (in parallel) | {tp['median_items_per_s']['four_shards_x8']} | "
        f"{tp['shards_vs_one_process']} |",
        f"| 4 shards × 8, then the merge | {tp['median_items_per_s']['four_shards_x8_and_merge']} | "
        f"{tp['shards_and_merge_vs_one_process']} |",
        "",
        "All four shards share one machine and one endpoint here, so they share its CPU and (divided) connection",
        "budget: this is what sharding costs where it cannot help. Shard when the model side or a job's time limit",
        "is the bottleneck.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merge-items", type=int, default=100_000)
    parser.add_argument("--merge-shards", type=int, default=8)
    parser.add_argument("--items", type=int, default=2000, help="items of the throughput part")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    kit = Path(os.environ.get("BENCH_KIT", REPO.parent / "shared" / "bench"))
    if missing_packages():
        print(f"the mock needs: {INSTALL_HINT}", file=sys.stderr)
        return 1
    load_before = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryDirectory(prefix="scoregate-shards-bench-") as tmp:
        work = Path(tmp)
        with MockEndpoint(kit, work / "mock") as mock:
            merge = merge_bench(kit, work, args.merge_items, args.merge_shards)
            throughput = throughput_bench(kit, work, args.items, args.repeats)
    result = {
        "recorded_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared)",
        "load_before": load_before,
        "load_after": round(os.getloadavg()[0], 2),
        "mock": mock.note,
        "command": "python bench/shards.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "merge": merge,
        "throughput": throughput,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "shards.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (args.out / "shards.md").write_text(_markdown(result), encoding="utf-8")
    print(_markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
