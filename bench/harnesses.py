"""Run one harness as a child process and measure it: wall time, items phase, peak RSS (wait4), CPU, answers."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from scoregate_project import EXPERIMENT

RESULT_LINE = re.compile(r"^BENCH_RESULT (\{.*\})\s*$", re.MULTILINE)
PROGRESS_LINE = re.compile(r"(\d+)/(\d+) items, ([\d.]+) items/s")
HARNESSES = ("raw_httpx", "langfuse_notrace", "scoregate")
OPTIONAL_HARNESSES = ("raw_openai",)
"""Run only when named with --harnesses: the kit's loop through openai.AsyncOpenAI (the SDK scoregate uses)."""


@dataclass(frozen=True)
class BenchSetup:
    """What every harness of one bench run shares."""

    python: Path
    scoregate: Path
    kit: Path
    workdir: Path
    kit_data: Path
    n: int
    concurrency: int
    port: int
    project: Path
    timeout_s: float = 900.0


@dataclass(frozen=True)
class Sample:
    """One reading of a running child: seconds since launch, resident memory, CPU used so far."""

    t: float
    rss_mb: float
    cpu_s: float


@dataclass
class ChildRun:
    """How one child process ran, measured from outside."""

    returncode: int
    launched_at: float
    exited_at: float
    peak_rss_mb: float
    cpu_s: float
    output: str
    samples: list[Sample] = field(default_factory=list)

    @property
    def wall_s(self) -> float:
        """Seconds from launch to exit: interpreter start, imports, work, teardown."""
        return self.exited_at - self.launched_at

    def cpu_at(self, epoch: float) -> float:
        """CPU seconds the child had used at wall-clock time `epoch`, interpolated between samples."""
        points = [(0.0, 0.0), *((x.t, x.cpu_s) for x in self.samples), (self.wall_s, self.cpu_s)]
        t = epoch - self.launched_at
        for (t0, c0), (t1, c1) in itertools.pairwise(points):
            if t0 <= t <= t1:
                return c0 if t1 == t0 else c0 + (c1 - c0) * (t - t0) / (t1 - t0)
        return self.cpu_s if t > 0 else 0.0

    def cpu_between(self, start: float, end: float) -> float:
        """CPU seconds the child used between two wall-clock times (the items phase)."""
        return max(0.0, self.cpu_at(end) - self.cpu_at(start))


@dataclass
class Measurement:
    """One harness run: the whole command and its items phase, memory, CPU and what it computed."""

    harness: str
    rep: int
    n_items: int
    n_ok: int
    wall_s: float
    items_phase_s: float
    peak_rss_mb: float
    cpu_s: float
    items_cpu_s: float
    mean_word_count: float | None
    mean_similarity: float | None
    returncode: int
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def items_per_s(self) -> float:
        """Items per second over the items phase (the judged rate)."""
        return self.n_items / self.items_phase_s

    @property
    def whole_per_s(self) -> float:
        """Items per second over the whole command, startup and teardown included."""
        return self.n_items / self.wall_s

    @property
    def cpu_ms_per_item(self) -> float:
        """CPU (user + system) the whole process spent per item, in ms (startup included)."""
        return self.cpu_s * 1000 / self.n_items

    @property
    def items_cpu_ms_per_item(self) -> float:
        """CPU the process spent per item during the items phase only, in ms."""
        return self.items_cpu_s * 1000 / self.n_items

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form, derived rates included."""
        return {
            **asdict(self),
            "items_per_s": round(self.items_per_s, 2),
            "whole_per_s": round(self.whole_per_s, 2),
            "cpu_ms_per_item": round(self.cpu_ms_per_item, 3),
            "items_cpu_ms_per_item": round(self.items_cpu_ms_per_item, 3),
        }


_TICKS = os.sysconf("SC_CLK_TCK")


def _read(pid: int) -> tuple[float, float] | None:
    """Return (RSS MB, CPU s) of a live process from /proc, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return None
    # After the command name: state is field 3; utime, stime are fields 14, 15; rss (pages) is field 24.
    cpu = (int(fields[11]) + int(fields[12])) / _TICKS
    rss = int(fields[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    return rss, cpu


def use_bytecode_cache(python: Path, src: Path) -> str:
    """Run every harness with Python's bytecode cache, as an installed package runs, and write it for `src` now.

    An editable install has no compiled modules until a run writes them; with PYTHONDONTWRITEBYTECODE set
    (some sandboxes set it) none is ever written and every run compiles scoregate's ~40 modules again.
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([str(python), "-m", "compileall", "-q", str(src)], check=True)
    return "on (PYTHONDONTWRITEBYTECODE unset for every harness; `python -m compileall src` before the runs)"


def measure_child(
    cmd: Sequence[str], *, env: dict[str, str], cwd: Path, log: Path, timeout_s: float, sample_every_s: float = 0.25
) -> ChildRun:
    """Run `cmd`, wait for it with wait4 (peak RSS and CPU of that process) and sample RSS and CPU on the way."""
    samples: list[Sample] = []
    stop = threading.Event()
    launched = time.time()
    with log.open("wb") as sink:
        proc = subprocess.Popen(list(cmd), env=env, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT)

        def sample() -> None:
            while not stop.wait(sample_every_s):
                now, reading = time.time(), _read(proc.pid)
                if reading is None:
                    return
                samples.append(Sample(round(now - launched, 3), round(reading[0], 1), reading[1]))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        killer = threading.Timer(timeout_s, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
            stop.set()
    exited = time.time()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4; tell Popen so it does not wait again
    sampler.join()
    return ChildRun(
        returncode=proc.returncode,
        launched_at=launched,
        exited_at=exited,
        peak_rss_mb=round(usage.ru_maxrss / 1024, 1),  # Linux reports kilobytes
        cpu_s=round(usage.ru_utime + usage.ru_stime, 3),
        output=log.read_text(encoding="utf-8", errors="replace"),
        samples=samples,
    )


def _kit_env(setup: BenchSetup) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    env.update(
        BENCH_PORT=str(setup.port),
        BENCH_N=str(setup.n),
        BENCH_CONCURRENCY=str(setup.concurrency),
        BENCH_DATA=str(setup.kit_data),
        BENCH_OUTDIR=str(setup.workdir / "out"),
    )
    return env


def _failed(harness: str, run: ChildRun, why: str) -> RuntimeError:
    tail = "\n".join(run.output.splitlines()[-15:])
    return RuntimeError(f"{harness}: {why} (exit code {run.returncode}); last lines:\n{tail}")


def run_kit_script(setup: BenchSetup, harness: str, rep: int) -> Measurement:
    """Run a kit driver (raw_httpx, raw_openai, langfuse_notrace) and read its BENCH_RESULT line."""
    script, extra = {
        "raw_httpx": ("raw_httpx.py", {}),
        "raw_openai": ("raw_openai.py", {}),
        "langfuse_notrace": ("h_langfuse.py", {"LANGFUSE_MODE": "notrace"}),
    }[harness]
    env = {**_kit_env(setup), **extra}
    log = setup.workdir / "logs" / f"{harness}-{setup.n}-{rep}.log"
    run = measure_child(
        [str(setup.python), str(setup.kit / script)], env=env, cwd=setup.workdir, log=log, timeout_s=setup.timeout_s
    )
    found = RESULT_LINE.findall(run.output)
    if run.returncode != 0 or not found:
        raise _failed(harness, run, "no BENCH_RESULT line")
    result = json.loads(found[-1])
    eval_s = float(result["eval_s"])
    items_end = run.exited_at - float(result.get("write_s", 0.0)) - float(result.get("shutdown_s", 0.0))
    return Measurement(
        harness=harness,
        rep=rep,
        n_items=int(result["n_items"]),
        n_ok=int(result["n_ok"]),
        wall_s=round(run.wall_s, 3),
        items_phase_s=round(eval_s, 3),
        peak_rss_mb=run.peak_rss_mb,
        cpu_s=run.cpu_s,
        items_cpu_s=round(run.cpu_between(items_end - eval_s, items_end), 3),
        mean_word_count=result.get("mean_word_count"),
        mean_similarity=result.get("mean_similarity"),
        returncode=run.returncode,
        detail={"items_phase": "the driver's eval_s (from the first request to the last result written)"},
    )


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def run_dirs(runs: Path) -> set[Path]:
    """The run folders of a run store (it also holds files such as active-run.json)."""
    return {path for path in runs.iterdir() if path.is_dir()} if runs.is_dir() else set()


def _first_task_call(run_dir: Path) -> float:
    """When the run's first item request went out: the earliest task call's `started_at` in results.jsonl."""
    with (run_dir / "results.jsonl").open(encoding="utf-8") as lines:
        return min(
            _epoch(call["started_at"])
            for line in lines
            for call in json.loads(line)["calls"]
            if call["purpose"] == "task" and call.get("started_at")
        )


def _first_request(manifest: dict[str, Any], first_item: float) -> float:
    """When the endpoint got the run's first request: the models' one-token check (manifest `model_checks`) or,
    if an item's request went out before it, that item's."""
    checks = [_epoch(call["started_at"]) for call in manifest.get("model_checks") or [] if call.get("started_at")]
    return min([first_item, *checks])


def run_scoregate(setup: BenchSetup, rep: int, *, keep_run: bool = False) -> tuple[Measurement, ChildRun]:
    """Run `scoregate run` on the bench project; the items phase is the manifest's started_at → finished_at."""
    runs = setup.project / "runs"
    before = run_dirs(runs)
    cmd = [str(setup.scoregate), "run", EXPERIMENT, "--no-cache", "--concurrency", str(setup.concurrency)]
    cmd += ["--no-mlflow", "-C", str(setup.project)]
    log = setup.workdir / "logs" / f"scoregate-{setup.n}-{rep}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    run = measure_child(cmd, env=env, cwd=setup.workdir, log=log, timeout_s=setup.timeout_s)
    new = sorted(run_dirs(runs) - before)
    if run.returncode != 0 or len(new) != 1 or not (new[0] / "summary.json").is_file():
        raise _failed("scoregate", run, "no finished run in the store")
    run_dir = new[0]
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    started, finished = _epoch(manifest["started_at"]), _epoch(manifest["finished_at"])
    first_item = _first_task_call(run_dir)
    scores = summary["scores"]
    progress = PROGRESS_LINE.findall(run.output)
    measurement = Measurement(
        harness="scoregate",
        rep=rep,
        n_items=int(summary["run_metrics"]["items"]),
        n_ok=min(int(scores["word_count"]["n_measured"]), int(scores["similarity"]["n_measured"])),
        wall_s=round(run.wall_s, 3),
        items_phase_s=round(finished - started, 3),
        peak_rss_mb=run.peak_rss_mb,
        cpu_s=run.cpu_s,
        items_cpu_s=round(run.cpu_between(started, finished), 3),
        mean_word_count=scores["word_count"]["mean"],
        mean_similarity=scores["similarity"]["mean"],
        returncode=run.returncode,
        detail={
            "items_phase": "manifest started_at -> finished_at (preflight, items, store close)",
            "startup_s": round(started - run.launched_at, 3),
            "first_request_s": round(_first_request(manifest, first_item) - run.launched_at, 3),
            "first_item_s": round(first_item - run.launched_at, 3),
            "after_items_s": round(run.exited_at - finished, 3),
            "progress_items_per_s": float(progress[-1][2]) if progress else None,
            "errors": int(summary["run_metrics"]["error_count"]),
            "run_id": manifest["run_id"],
        },
    )
    if not keep_run:
        for path in sorted(run_dir.iterdir()):
            path.unlink()
        run_dir.rmdir()
    return measurement, run


def run_harness(setup: BenchSetup, harness: str, rep: int) -> Measurement:
    """Run one of HARNESSES or OPTIONAL_HARNESSES once and return its measurement."""
    if harness == "scoregate":
        return run_scoregate(setup, rep)[0]
    return run_kit_script(setup, harness, rep)
