"""scoregate at scale: peak memory and time of every command on a 100,000-item project, as ratios to 2,000 items.

Usage (from the repo root):  .venv/bin/python bench/scale.py [--sizes 2000,100000] [--langfuse-max 100000]
For each size it builds the W1 project of bench/throughput.py (the kit's data and prompt, a counters evaluator)
against this bench's own nginx mock (0 ms; bench/scale_mock.py), then measures, each as a child process (peak RSS
from wait4, wall time, time to its first line on stdout):

  run A            `scoregate run w1 --no-cache --concurrency 32` with every mirror on: MLflow (embedded sqlite,
                   the default) and Langfuse (the tests' Langfuse test double, served by bench/fake_langfuse_serve.py;
                   at sizes up to --langfuse-max, `--no-langfuse` above it)
  run B            the same with the MLflow mirror only (`--no-langfuse`): the run `compare` and `diff` pair with A
  run, no mirrors  the same with `--no-mlflow --no-langfuse` (scoregate alone)
  show --items     `scoregate runs show A --items` (stdout piped, as a pager or a CI log reads it), `--compact`
                   (one line an item) and `--items --json`: time to the first line and to the last
  compare          `scoregate compare A B`
  diff             `scoregate diff A B`
  report           `scoregate report A` and `scoregate report A B`
  leaderboard      `scoregate leaderboard`
  mlflow-sync      `scoregate mlflow-sync A`, and with `--eval-rows` at sizes up to --eval-rows-max
  langfuse-sync    `scoregate langfuse-sync B` (never mirrored to Langfuse): the Langfuse mirror alone
  (baseline)       with --baseline: compare, report, leaderboard and langfuse-sync B (its record removed) again

Peak memory is given two ways: the largest single process (`ru_maxrss` from wait4, which covers the command and
the children it waited for: the MLflow mirror's worker) and the whole tree at once (the RSS of the command and its
children, summed, sampled every 0.1 s).

Results: bench/results/scale.json and scale.md (ratios to the smallest size, machine, load averages).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harnesses import run_dirs, use_bytecode_cache
from mock_endpoint import INSTALL_HINT, missing_packages
from scale_mock import FakeLangfuseProcess, ScaleMock
from scale_report import markdown
from scoregate_project import EXPERIMENT, generate_kit_data, write_project

REPO = Path(__file__).resolve().parents[1]
TARGET_RSS_MB = 250.0
TARGET_FIRST_PAGE_S = 2.0
TARGET_LISTING_S = 20.0
SKIPPABLE = (
    "run-nomirror",
    "diff",
    "mlflow-sync",
    "run-A-langfuse",
    "base-lf-sync",
    "compare",
    "report",
    "leaderboard",
    "show",
    "langfuse-sync",
)
"""run-A-langfuse: run A mirrored to MLflow only (the Langfuse mirror is still measured alone, `langfuse-sync B`);
base-lf-sync: no `langfuse-sync (baseline)`; compare, report, leaderboard, langfuse-sync: those commands left out;
show: every `runs show` row left out."""


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sizes", default="2000,100000", help="comma-separated item counts; the first is the reference"
    )
    parser.add_argument("--langfuse-max", type=int, default=100_000, help="largest size whose runs mirror to Langfuse")
    parser.add_argument(
        "--langfuse-rpm",
        type=float,
        default=0.0,
        help="SCOREGATE_LANGFUSE_RPM for the runs (default 0: no client-side throttle; 90 suits Langfuse Cloud)",
    )
    parser.add_argument(
        "--eval-rows-max", type=int, default=2000, help="largest size given `--eval-rows` (~57 ms/item)"
    )
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--show-repeats", type=int, default=3, help="runs of `runs show --items` (median kept)")
    parser.add_argument(
        "--skip",
        default="",
        help=f"comma-separated commands left out, of: {', '.join(SKIPPABLE)} (a shorter bench on a busy machine)",
    )
    parser.add_argument("--port", type=int, default=18700, help="port of this bench's nginx mock (0 ms)")
    parser.add_argument(
        "--resume-from",
        type=Path,
        default=None,
        help="a <name>.partial.json of an earlier invocation: its sizes are kept, not measured again",
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--name", default="scale", help="results file stem (default: scale)")
    parser.add_argument("--workdir", type=Path, default=None, help="scratch dir (default: a new temp dir, removed)")
    parser.add_argument("--python", type=Path, default=REPO / ".venv" / "bin" / "python")
    parser.add_argument("--scoregate", type=Path, default=REPO / ".venv" / "bin" / "scoregate")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="another scoregate executable (an older commit's): the commands in BASELINE_ROWS are measured with it "
        "too, on the same runs, after the rest, as rows '<command> (baseline)'",
    )
    args = parser.parse_args(argv)
    args.skip = {name.strip() for name in args.skip.split(",") if name.strip()}
    if unknown := args.skip - set(SKIPPABLE):
        parser.error(f"--skip: {', '.join(sorted(unknown))} is not one of {', '.join(SKIPPABLE)}")
    return args


def _kit() -> Path:
    kit = Path(os.environ.get("BENCH_KIT", str(REPO / ".." / "shared" / "bench"))).resolve()
    if not (kit / "common.py").is_file():
        sys.exit(f"error: no bench kit at {kit} (set BENCH_KIT to the folder holding common.py, gen_data.py...)")
    return kit


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def tree_rss_kb(pid: int) -> tuple[int, int]:
    """(RSS of process `pid` and of all its descendants, summed, in kB; how many processes that is)."""
    total, count, todo, seen = 0, 0, [pid], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
            count += 1
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total, count


def measure(cmd: list[str], *, env: dict[str, str], cwd: Path, log: Path, timeout_s: float) -> dict[str, Any]:
    """Run `cmd` with stdout piped; return wall time, time to its first stdout line, peak RSS (wait4: the largest
    process), the peak of the whole tree's RSS summed, and CPU."""
    first_line: list[float] = []
    tree = {"peak_kb": 0, "processes": 0}
    counted = {"bytes": 0, "lines": 0}
    load_before = _load()
    launched = time.monotonic()
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=sink)
        assert proc.stdout is not None
        stdout = proc.stdout

        def drain() -> None:
            for raw in iter(lambda: stdout.readline(), b""):
                if not first_line:
                    first_line.append(time.monotonic() - launched)
                counted["bytes"] += len(raw)
                counted["lines"] += 1
                if counted["lines"] <= 200:
                    sink.write(raw)

        def sample() -> None:
            while proc.poll() is None:
                kb, count = tree_rss_kb(proc.pid)
                if kb > tree["peak_kb"]:
                    tree["peak_kb"], tree["processes"] = kb, count
                time.sleep(0.1)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        killer = threading.Timer(timeout_s, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # the bench itself stopped (SIGTERM, Ctrl-C): leave no child behind
            proc.kill()
            proc.wait()
            raise
        finally:
            killer.cancel()
        wall = time.monotonic() - launched
        proc.returncode = os.waitstatus_to_exitcode(status)
        reader.join()
    return {
        "command": " ".join(cmd[1:]),
        "returncode": proc.returncode,
        "wall_s": round(wall, 2),
        "first_line_s": round(first_line[0], 3) if first_line else None,
        "stdout_lines": counted["lines"],
        "stdout_bytes": counted["bytes"],
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "tree_peak_rss_mb": round(tree["peak_kb"] / 1024, 1),
        "tree_processes_at_peak": tree["processes"],
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "load_before": load_before,
        "load_after": _load(),
    }


class SizeBench:
    """Every command of the bench on one project of `n` items."""

    def __init__(self, args: argparse.Namespace, project: Path, n: int, langfuse_env: dict[str, str] | None) -> None:
        self.args, self.project, self.n, self.langfuse_env = args, project, n, langfuse_env
        self.logs = project.parent / "logs"
        self.logs.mkdir(exist_ok=True)
        self.timeout_s = max(1800.0, n / 20)

    def env(self, *, langfuse: bool) -> dict[str, str]:
        """The child's environment: no Langfuse keys unless `langfuse`, MLflow's embedded default store."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "MLFLOW_"))}
        env["COLUMNS"] = "120"
        env["SCOREGATE_LANGFUSE_RPM"] = f"{self.args.langfuse_rpm:g}"
        if langfuse and self.langfuse_env:
            env.update(self.langfuse_env)
        return env

    def cli(self, name: str, *argv: str, langfuse: bool = False, baseline: bool = False) -> dict[str, Any]:
        """Measure `scoregate ARGV -C project` (the `--baseline` executable when asked) and print one line about it."""
        cmd = [str(self.args.baseline if baseline else self.args.scoregate), *argv, "-C", str(self.project)]
        log = self.logs / f"{name}-{self.n}.log"
        result = measure(cmd, env=self.env(langfuse=langfuse), cwd=self.project, log=log, timeout_s=self.timeout_s)
        result["log"] = str(log)
        first = f"first line {result['first_line_s']}s" if result["first_line_s"] is not None else "no stdout"
        print(
            f"  {self.n:>7} {name:16s} rc {result['returncode']}  {result['wall_s']:8.1f} s  {first:22s} "
            f"peak RSS {result['peak_rss_mb']:6.1f} MB (tree {result['tree_peak_rss_mb']:6.1f} MB)  "
            f"load {result['load_before']}->{result['load_after']}",
            flush=True,
        )
        if result["returncode"] != 0:
            tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
            raise RuntimeError(f"{name} failed (exit {result['returncode']}):\n" + "\n".join(tail))
        return result

    def run_argv(self) -> list[str]:
        """`scoregate run` of the bench experiment: cache off, the local prompt file (the double has no prompts)."""
        return [
            "run",
            EXPERIMENT,
            "--no-cache",
            "--concurrency",
            str(self.args.concurrency),
            "--prompt-source",
            "local",
        ]

    def run(self, name: str, *, langfuse: bool, baseline: bool = False) -> tuple[dict[str, Any], str]:
        """Measure one `scoregate run` mirrored to MLflow (and Langfuse when asked); return it and the new run id."""
        before = run_dirs(self.project / "runs")
        langfuse = langfuse and self.langfuse_env is not None
        argv = [*self.run_argv(), *([] if langfuse else ["--no-langfuse"])]
        result = self.cli(name, *argv, langfuse=langfuse, baseline=baseline)
        (run_dir,) = sorted(run_dirs(self.project / "runs") - before)
        links = json.loads((run_dir / "links.json").read_text(encoding="utf-8"))
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        result["items"] = summary["run_metrics"]["items"]
        result["errors"] = summary["run_metrics"]["error_count"]
        result["mirrors"] = {
            "mlflow": bool(links.get("mlflow_run_id")),
            "langfuse": bool(links.get("langfuse_synced")) if langfuse else "off (--no-langfuse)",
        }
        if result["items"] != self.n or not result["mirrors"]["mlflow"] or result["mirrors"]["langfuse"] is False:
            raise RuntimeError(f"{name}: {result['items']} items, mirrors {result['mirrors']} (see {result['log']})")
        return result, run_dir.name

    def all(self) -> dict[str, Any]:
        """Run every command once, in order; return name → measurement."""
        out: dict[str, Any] = {}
        skip = self.args.skip
        every = self.langfuse_env is not None and "run-A-langfuse" not in skip
        out["run A, every mirror" if every else "run A, MLflow mirror"], a = self.run("run-A", langfuse=every)
        out["run B, MLflow mirror"], b = self.run("run-B", langfuse=False)
        if "run-nomirror" not in skip:
            out["run, no mirrors"] = self.cli("run-nomirror", *self.run_argv(), "--no-mlflow", "--no-langfuse")
        if "show" not in skip:
            shows = [self.cli(f"show-items-{i}", "runs", "show", a, "--items") for i in range(self.args.show_repeats)]
            out["runs show --items"] = with_repeats(shows)
            out["runs show --compact"] = self.cli("show-compact", "runs", "show", a, "--compact")
            out["runs show --items --json"] = self.cli("show-json", "runs", "show", a, "--items", "--json")
        if "compare" not in skip:
            out["compare"] = self.cli("compare", "compare", a, b)
        if "diff" not in skip:
            out["diff"] = self.cli("diff", "diff", a, b)
        if "report" not in skip:
            out["report A"] = self.cli("report-A", "report", a, "-o", str(self.logs / f"report-{self.n}.html"))
            out["report A B"] = self.cli("report-AB", "report", a, b, "-o", str(self.logs / f"compare-{self.n}.html"))
        if "leaderboard" not in skip:
            out["leaderboard"] = self.cli("leaderboard", "leaderboard")
        if "mlflow-sync" not in skip:
            out["mlflow-sync"] = self.cli("mlflow-sync", "mlflow-sync", a)
        if "mlflow-sync" not in skip and self.n <= self.args.eval_rows_max:
            out["mlflow-sync --eval-rows"] = self.cli("eval-rows", "mlflow-sync", a, "--eval-rows")
        if self.langfuse_env is not None and "langfuse-sync" not in skip:  # the Langfuse mirror alone, of a new run
            out["langfuse-sync"] = self.cli("langfuse-sync", "langfuse-sync", b, langfuse=True)
        if self.args.baseline is not None:
            base: dict[str, tuple[str, ...]] = {
                "compare": ("compare", a, b),
                "report A": ("report", a, "-o", str(self.logs / "base-a.html")),
                "report A B": ("report", a, b, "-o", str(self.logs / "base-ab.html")),
                "leaderboard": ("leaderboard",),
            }
            for name, argv in base.items():
                out[f"{name} (baseline)"] = self.cli("base-" + name.replace(" ", "-"), *argv, baseline=True)
            if self.langfuse_env is not None and "base-lf-sync" not in skip:  # run B again, its record removed
                (self.project / "runs" / b / "langfuse.json").unlink()
                out["langfuse-sync (baseline)"] = self.cli(
                    "base-lf-sync", "langfuse-sync", b, langfuse=True, baseline=True
                )
        return out


FLOOR_SCRIPT = (
    "import resource, sys\n"
    "from mlflow.tracking import MlflowClient\n"
    "MlflowClient(tracking_uri='sqlite:///' + sys.argv[1]).search_experiments()\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
)


def mlflow_floor(python: Path, workdir: Path) -> float:
    """Peak RSS (MB) of a bare interpreter that imports MLflow's client and opens a new sqlite store: what any
    command mirroring to MLflow in-process holds before it does anything of its own."""
    db = workdir / "floor.db"
    done = subprocess.run([str(python), "-c", FLOOR_SCRIPT, str(db)], capture_output=True, text=True, check=True)
    return round(int(done.stdout.strip().splitlines()[-1]) / 1024, 1)


def with_repeats(measurements: list[dict[str, Any]]) -> dict[str, Any]:
    """The measurement whose first line came at the median time, with every repeat's first line and wall time."""
    ordered = sorted(measurements, key=lambda m: m["first_line_s"] if m["first_line_s"] is not None else 1e9)
    median = dict(ordered[len(ordered) // 2])
    kept = ("first_line_s", "wall_s", "peak_rss_mb", "load_before")
    median["repeats"] = [{k: m[k] for k in kept} for m in measurements]
    return median


def ratios(sizes: dict[int, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per size above the reference: each command's peak RSS and wall time as a ratio to the reference size's."""
    ref_n = min(sizes)
    out: dict[str, dict[str, Any]] = {}
    for n, commands in sizes.items():
        if n == ref_n:
            continue
        out[str(n)] = {
            name: {
                "peak_rss": round(m["peak_rss_mb"] / sizes[ref_n][name]["peak_rss_mb"], 2),
                "wall": round(m["wall_s"] / max(sizes[ref_n][name]["wall_s"], 0.01), 1),
            }
            for name, m in commands.items()
            if name in sizes[ref_n]
        }
    return out


def verdicts(sizes: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """The issue's targets at the largest size: every command under 250 MB, the first page of items in under 2 s."""
    big = {name: m for name, m in sizes[max(sizes)].items() if not name.endswith("(baseline)")}
    worst = max(big.values(), key=lambda m: m["peak_rss_mb"])
    worst_tree = max(big.values(), key=lambda m: m.get("tree_peak_rss_mb") or 0.0)
    first = big.get("runs show --items", {}).get("first_line_s")
    listings = {
        name: big[name]["wall_s"] for name in ("runs show --compact", "runs show --items --json") if name in big
    }
    return {
        "size": max(sizes),
        "rss_limit_mb": TARGET_RSS_MB,
        "largest_peak_rss_mb": worst["peak_rss_mb"],
        "largest_peak_command": worst["command"],
        "rss_holds": worst["peak_rss_mb"] < TARGET_RSS_MB,
        "largest_tree_rss_mb": worst_tree.get("tree_peak_rss_mb"),
        "largest_tree_command": worst_tree["command"],
        "tree_rss_holds": (worst_tree.get("tree_peak_rss_mb") or 0.0) < TARGET_RSS_MB,
        "listing_limit_s": TARGET_LISTING_S,
        "listings_s": listings,
        "listings_hold": all(wall < TARGET_LISTING_S for wall in listings.values()),
        "first_page_limit_s": TARGET_FIRST_PAGE_S,
        "show_items_first_line_s": first,
        "first_page_holds": first is not None and first < TARGET_FIRST_PAGE_S,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the bench; write bench/results/<name>.json and .md; return the exit code."""
    args = _args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: stop the mock and the Langfuse double
    if missing := missing_packages():
        print(f"error: the mock endpoint needs {', '.join(missing)}; install with:\n  {INSTALL_HINT}", file=sys.stderr)
        return 2
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    kit = _kit()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="scoregate-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "src"], cwd=REPO, capture_output=True, text=True)
    machine: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "scoregate_commit": commit.stdout.strip() + (" (+ uncommitted src changes)" if dirty.stdout.strip() else ""),
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
        "bytecode_cache": use_bytecode_cache(args.python, REPO / "src"),
    }
    results: dict[int, dict[str, Any]] = {}
    if args.resume_from is not None:
        earlier = json.loads(args.resume_from.read_text(encoding="utf-8"))
        results.update({int(n): commands for n, commands in earlier.items()})
    started = time.monotonic()
    try:
        kit_data = generate_kit_data(kit, max(sizes), workdir / f"kit-data-{max(sizes)}.jsonl")
        with ScaleMock(kit, workdir / "mock", args.port), FakeLangfuseProcess(args.python, workdir / "fake.log") as lf:
            floor = mlflow_floor(args.python, workdir)
            print(
                f"MLflow floor (a bare interpreter with MLflow's client on a new sqlite store): {floor} MB", flush=True
            )
            for n in sizes:
                if n in results:
                    print(f"{n} items: kept from {args.resume_from}", flush=True)
                    continue
                project = write_project(
                    workdir / f"project-{n}", kit=kit, kit_data=kit_data, n=n, port=args.port,
                    concurrency=args.concurrency,
                )  # fmt: skip
                print(f"{n} items (Langfuse mirror {'on' if n <= args.langfuse_max else 'off'}):", flush=True)
                results[n] = SizeBench(args, project, n, lf.env if n <= args.langfuse_max else None).all()
                partial = args.out / f"{args.name}.partial.json"
                partial.parent.mkdir(parents=True, exist_ok=True)
                partial.write_text(json.dumps({str(k): v for k, v in results.items()}, indent=2), encoding="utf-8")
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    machine["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "command": "BENCH_KIT=../shared/bench .venv/bin/python bench/scale.py "
        f"--sizes {','.join(map(str, sizes))} --langfuse-max {args.langfuse_max} --eval-rows-max {args.eval_rows_max} "
        f"--langfuse-rpm {args.langfuse_rpm:g} --show-repeats {args.show_repeats}"
        + (f" --skip {','.join(sorted(args.skip))}" if args.skip else "")
        + (f" --baseline {args.baseline}" if args.baseline else ""),
        "config": {
            "sizes": sizes,
            "concurrency": args.concurrency,
            "mock": f"this bench's nginx + echo mock on 127.0.0.1:{args.port}, 0 ms, reply varied per request",
            "mlflow": "embedded sqlite store (the default: sqlite:///<project>/mlflow.db)",
            "langfuse": f"tests/support/fake_langfuse served standalone, runs of up to {args.langfuse_max} items, "
            f"SCOREGATE_LANGFUSE_RPM={args.langfuse_rpm:g}",
            "eval_rows_max": args.eval_rows_max,
            "peak_rss": "ru_maxrss from wait4: the largest process (the command, or a child it waited for)",
            "tree_peak_rss": "the RSS of the command and all its children, summed, sampled every 0.1 s",
            "first_line": "seconds from launch to the first line on the child's stdout (a pipe)",
            "total_s": round(time.monotonic() - started, 1),
        },
        "mlflow_floor_mb": floor,
        "sizes": {str(n): r for n, r in results.items()},
        "ratios": ratios(results),
        "verdicts": verdicts(results),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    text = markdown(report)
    (args.out / f"{args.name}.md").write_text(text, encoding="utf-8")
    (args.out / f"{args.name}.partial.json").unlink(missing_ok=True)
    print("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
