"""scoregate's throughput and memory bench: raw httpx loop vs Langfuse's runner vs `scoregate run`, one invocation.

Usage (from the repo root):  .venv/bin/python bench/throughput.py [--repeats 3] [--big-n 100000] [--skip-big]
The kit (mock endpoint, raw loop, Langfuse driver, data generator) is read from $BENCH_KIT, default ../shared/bench.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import report
from harnesses import (
    HARNESSES,
    OPTIONAL_HARNESSES,
    BenchSetup,
    Measurement,
    run_harness,
    run_scoregate,
    use_bytecode_cache,
)
from mock_endpoint import INSTALL_HINT, PORTS, MockEndpoint, missing_packages
from scoregate_project import generate_kit_data, write_project

REPO = Path(__file__).resolve().parents[1]


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="items per harness run (default 2000)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats of each harness (median kept)")
    parser.add_argument("--port", type=int, default=18200, choices=sorted(PORTS), help="mock port (18200: 200 ms)")
    parser.add_argument(
        "--harnesses",
        default=",".join(HARNESSES),
        help=f"comma-separated, from {', '.join(HARNESSES + OPTIONAL_HARNESSES)}",
    )
    parser.add_argument("--big-n", type=int, default=100_000, help="items of the memory run (default 100000)")
    parser.add_argument(
        "--big-port", type=int, default=18000, choices=sorted(PORTS), help="mock port of the memory run"
    )
    parser.add_argument("--skip-big", action="store_true", help="skip the memory run")
    parser.add_argument("--startup-repeats", type=int, default=15, help="runs of each startup command (median)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results", help="where the results go")
    parser.add_argument("--name", default="throughput", help="results file stem (default: throughput)")
    parser.add_argument("--workdir", type=Path, default=None, help="scratch dir (default: a new temp dir, removed)")
    parser.add_argument("--python", type=Path, default=REPO / ".venv" / "bin" / "python")
    parser.add_argument("--scoregate", type=Path, default=REPO / ".venv" / "bin" / "scoregate")
    return parser.parse_args(argv)


def _kit() -> Path:
    kit = Path(os.environ.get("BENCH_KIT", str(REPO / ".." / "shared" / "bench"))).resolve()
    if not (kit / "common.py").is_file():
        sys.exit(f"error: no bench kit at {kit} (set BENCH_KIT to the folder holding common.py, raw_httpx.py...)")
    return kit


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _machine() -> dict[str, Any]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "loadavg_before": list(os.getloadavg()),
        "python": platform.python_version(),
        "scoregate_commit": commit.stdout.strip() or None,
        "versions": {p: _version(p) for p in ("scoregate", "langfuse", "openai", "httpx", "httpx2", "rapidfuzz")},
    }


def _setup(args: argparse.Namespace, kit: Path, workdir: Path, n: int, port: int) -> BenchSetup:
    kit_data = generate_kit_data(kit, n, workdir / f"kit-data-{n}.jsonl")
    project = write_project(
        workdir / f"project-{n}-{port}", kit=kit, kit_data=kit_data, n=n, port=port, concurrency=args.concurrency
    )
    return BenchSetup(
        python=args.python,
        scoregate=args.scoregate,
        kit=kit,
        workdir=workdir,
        kit_data=kit_data,
        n=n,
        concurrency=args.concurrency,
        port=port,
        project=project,
        timeout_s=max(900.0, n / 20),
    )


def _show(m: Measurement) -> None:
    extra = ""
    if m.harness == "scoregate":
        d = m.detail
        extra = f"  first request {d['first_request_s']:.2f}s  first item {d['first_item_s']:.2f}s"
        extra += f"  after {d['after_items_s']:.2f}s"
    print(
        f"  rep {m.rep} {m.harness:17s} {m.items_per_s:7.1f} items/s (items phase)  {m.whole_per_s:7.1f} (whole)  "
        f"peak RSS {m.peak_rss_mb:6.1f} MB  CPU ms/item {m.items_cpu_ms_per_item:4.2f} (items) "
        f"{m.cpu_ms_per_item:4.2f} (whole)  ok {m.n_ok}/{m.n_items}{extra}",
        flush=True,
    )


def _interleaved(setup: BenchSetup, harnesses: list[str], repeats: int) -> list[Measurement]:
    """Run each harness `repeats` times, rotating the order each repeat so no harness always goes first."""
    out = []
    for rep in range(repeats):
        shift = rep % len(harnesses)
        for harness in harnesses[shift:] + harnesses[:shift]:
            measurement = run_harness(setup, harness, rep)
            _show(measurement)
            out.append(measurement)
    return out


def startup_timings(args: argparse.Namespace, repeats: int) -> dict[str, Any]:
    """Median wall time of `python -c "import typer"`, `scoregate --help` and `scoregate --version`, interleaved."""
    commands = {
        "import typer": [str(args.python), "-c", "import typer"],
        "scoregate --help": [str(args.scoregate), "--help"],
        "scoregate --version": [str(args.scoregate), "--version"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, cmd in commands.items():
            started = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            times[name].append(time.perf_counter() - started)
    return {
        name: {"median_s": round(statistics.median(values), 3), "all_s": [round(v, 3) for v in values]}
        for name, values in times.items()
    }


def _big_run(args: argparse.Namespace, kit: Path, workdir: Path) -> dict[str, Any]:
    setup = _setup(args, kit, workdir, args.big_n, args.big_port)
    print(f"memory run: {args.big_n} items through scoregate on port {args.big_port}", flush=True)
    measurement, child = run_scoregate(setup, 0)
    _show(measurement)
    step = max(1, len(child.samples) // 60)
    return {
        "n_items": measurement.n_items,
        "n_ok": measurement.n_ok,
        "port": args.big_port,
        "latency_ms": int(PORTS[args.big_port] * 1000),
        "peak_rss_mb": measurement.peak_rss_mb,
        "items_per_s": round(measurement.items_per_s, 2),
        "whole_per_s": round(measurement.whole_per_s, 2),
        "wall_s": measurement.wall_s,
        "cpu_ms_per_item": round(measurement.cpu_ms_per_item, 3),
        "startup_s": measurement.detail["startup_s"],
        "first_request_s": measurement.detail["first_request_s"],
        "first_item_s": measurement.detail["first_item_s"],
        "after_items_s": measurement.detail["after_items_s"],
        "items_cpu_ms_per_item": round(measurement.items_cpu_ms_per_item, 3),
        "rss_timeline_s_mb": [(x.t, x.rss_mb) for x in child.samples[::step]],
    }


def main(argv: list[str] | None = None) -> int:
    """Run the bench, print the table, write bench/results/<name>.json and .md; return the exit code."""
    args = _args(argv)
    if missing := missing_packages():
        print(f"error: the mock endpoint needs {', '.join(missing)}; install with:\n  {INSTALL_HINT}", file=sys.stderr)
        return 2
    for tool in (args.python, args.scoregate):
        if not tool.is_file():
            print(f"error: {tool} not found; run `make setup` first", file=sys.stderr)
            return 2
    harnesses = [h.strip() for h in args.harnesses.split(",") if h.strip()]
    if unknown := sorted(set(harnesses) - set(HARNESSES + OPTIONAL_HARNESSES)):
        print(
            f"error: unknown harness(es) {unknown}; choose from {list(HARNESSES + OPTIONAL_HARNESSES)}", file=sys.stderr
        )
        return 2
    kit = _kit()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="scoregate-bench-"))
    (workdir / "logs").mkdir(parents=True, exist_ok=True)
    machine = _machine()
    machine["bytecode_cache"] = use_bytecode_cache(args.python, REPO / "src")
    setup = _setup(args, kit, workdir, args.n, args.port)
    # Not measured: loads every harness's imports once so no first run pays for a cold page cache.
    subprocess.run(
        [
            str(args.python),
            "-c",
            "import httpx, httpx2, langfuse, rapidfuzz, scoregate.app.run.experiment, scipy.stats",
        ],
        check=True,
    )
    try:
        with MockEndpoint(kit, workdir / "mock") as mock:
            print(f"mock endpoint {mock.note}; workdir {workdir}", flush=True)
            print(
                f"{args.n} items, concurrency {args.concurrency}, port {args.port}, {args.repeats} repeats", flush=True
            )
            startup = startup_timings(args, args.startup_repeats)
            print(f"startup: {startup}", flush=True)
            measurements = _interleaved(setup, harnesses, args.repeats)
            big = None if args.skip_big else _big_run(args, kit, workdir)
            mock_note = mock.note
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    machine["loadavg_after"] = list(os.getloadavg())
    machine["note"] = (
        f"{machine['cpus']} CPUs ({machine['cpu']}), shared with other processes; load average "
        f"{machine['loadavg_before'][0]:.1f} before, {machine['loadavg_after'][0]:.1f} after; bytecode cache "
        f"{machine['bytecode_cache']}"
    )
    table = report.medians(measurements)
    ratios = report.ratios(measurements, table) if "scoregate" in table else {}
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "config": {
            "n": args.n,
            "concurrency": args.concurrency,
            "repeats": args.repeats,
            "port": args.port,
            "latency_ms": int(PORTS[args.port] * 1000),
            "kit": str(kit),
            "mock": mock_note,
            "scoregate_command": f"scoregate run w1 --no-cache --concurrency {args.concurrency} --no-mlflow -C PROJECT",
            "judged_on": "items phase: raw/langfuse eval_s from their BENCH_RESULT; scoregate manifest "
            "started_at -> finished_at. Whole-command rates (interpreter start to exit) are reported beside them.",
            "peak_rss": "ru_maxrss of the child process from wait4 (as /usr/bin/time -v reports it)",
        },
        "runs": [m.to_dict() for m in measurements],
        "medians": table,
        "ratios": ratios,
        "big_run": big,
        "startup": startup,
        "verdicts": report.verdicts(ratios, big, table.get("scoregate"), startup),
    }
    report.write_json(args.out / f"{args.name}.json", results)
    text = report.markdown(results)
    (args.out / f"{args.name}.md").write_text(text, encoding="utf-8")
    print("\n" + text)
    print(f"written: {args.out / (args.name + '.json')} and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
