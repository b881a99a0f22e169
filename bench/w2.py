"""W2: one task call plus three judge calls per item; `scoregate run` vs a raw loop doing the same fan-out.

Usage (from the repo root):  .venv/bin/python bench/w2.py [--n 2000] [--repeats 3]
Both harnesses run in one invocation, interleaved, against this script's own nginx mock (200 ms per reply) whose
every reply is a JSON object both the task and the judges can use. Results: bench/results/w2.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml
from harnesses import RESULT_LINE, Measurement, measure_child, run_dirs, use_bytecode_cache
from mock_endpoint import ECHO_MODULE, INSTALL_HINT, NGINX, missing_packages
from scoregate_project import convert_dataset, generate_kit_data, kit_template

REPO = Path(__file__).resolve().parents[1]
JUDGES = ("w2_a", "w2_b", "w2_c")
EXPERIMENT = "w2"
TARGET = 0.9
REPLY = {"reasoning": "Grounded and concise.", **dict.fromkeys(JUDGES, 4)}


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="items per harness run (default 2000)")
    parser.add_argument("--concurrency", type=int, default=32, help="items in flight (default 32)")
    parser.add_argument(
        "--max-connections", type=int, default=128, help="HTTP connections to the mock, both harnesses (default 128)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats (median kept)")
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--port", type=int, default=18600)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--python", type=Path, default=REPO / ".venv" / "bin" / "python")
    parser.add_argument("--scoregate", type=Path, default=REPO / ".venv" / "bin" / "scoregate")
    return parser.parse_args(argv)


class W2Mock:
    """nginx + echo on one port: every chat completion answers REPLY (as the message content) after a delay."""

    def __init__(self, prefix: Path, port: int, latency_ms: int) -> None:
        self.prefix, self.port, self.latency_ms = prefix, port, latency_ms

    def config(self) -> str:
        """Return the nginx config."""
        body = {
            "id": "chatcmpl-w2",
            "object": "chat.completion",
            "created": 0,
            "model": "mock",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": json.dumps(REPLY)}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220},
        }
        quoted = json.dumps(body).replace("\\", "\\\\")  # nginx unescapes backslashes in quoted strings
        tmp = self.prefix / "tmp"
        return f"""load_module {ECHO_MODULE};
worker_processes 1;
pid {self.prefix}/nginx.pid;
error_log {self.prefix}/logs/error.log warn;
events {{ worker_connections 4096; multi_accept on; }}
http {{
  access_log off;
  default_type application/json;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  client_body_buffer_size 256k;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  server {{
    listen 127.0.0.1:{self.port} reuseport backlog=4096;
    location = /v1/chat/completions {{
      if ($request_method != POST) {{ return 405; }}
      echo_read_request_body;
      echo_sleep {self.latency_ms / 1000};
      echo '{quoted}';
    }}
    location = /v1/models {{ echo '{{"object": "list", "data": [{{"id": "mock", "object": "model"}}]}}'; }}
    location / {{ return 404; }}
  }}
}}
"""

    def __enter__(self) -> W2Mock:
        for sub in ("logs", "tmp"):
            (self.prefix / sub).mkdir(parents=True, exist_ok=True)
        conf = self.prefix / "nginx.conf"
        conf.write_text(self.config(), encoding="utf-8")
        started = subprocess.run([str(NGINX), "-p", str(self.prefix), "-c", str(conf)], capture_output=True)
        if started.returncode != 0:
            raise RuntimeError(f"the W2 mock (nginx, port {self.port}) did not start: {started.stderr.decode()}")
        deadline = time.monotonic() + 10
        while True:
            try:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{self.port}/v1/chat/completions", data=b"{}", method="POST"
                )
                with urllib.request.urlopen(request, timeout=5) as response:
                    content = json.loads(response.read())["choices"][0]["message"]["content"]
                if json.loads(content) != REPLY:
                    raise RuntimeError(f"the W2 mock answers {content!r}")
                return self
            except OSError:
                if time.monotonic() > deadline:
                    self._stop()
                    raise
                time.sleep(0.2)

    def _stop(self) -> None:
        pid_file = self.prefix / "nginx.pid"
        if pid_file.is_file():
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
            deadline = time.monotonic() + 5
            while pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.05)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop()


def judge_evaluator(key: str) -> dict[str, Any]:
    """A scoregate judge asking the same question as raw_fanout.py's judge `key`."""
    return {
        "kind": "llm_judge",
        "name": key,
        "version": 1,
        "prompt": f"Grade the summary for {key} from 1 to 5.\n\n<summary>\n{{{{summary}}}}\n</summary>",
        "variables": {"summary": "output"},
        "score": {"key": key, "data_type": "numeric", "range": [1, 5]},
        "temperature": 0,
        "max_tokens": 200,
    }


def write_project(root: Path, *, kit: Path, kit_data: Path, args: argparse.Namespace) -> Path:
    """Write the W2 project: the kit's task prompt and data, three judges, the mock as model and judge."""
    for sub in ("prompts", "evaluators", "datasets"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    config = {
        "project": "scoregate-bench-w2",
        "settings": {"model": "mock", "judge_model": "mock", "concurrency": args.concurrency},
        "models": {
            "mock": {
                "provider": "openai",
                "model": "mock",
                "base_url": f"http://127.0.0.1:{args.port}/v1",
                "max_connections": args.max_connections,
                "max_retries": 0,
                "timeout_s": 60,
            }
        },
        "experiments": {EXPERIMENT: {"dataset": EXPERIMENT, "prompt": EXPERIMENT, "evaluators": list(JUDGES)}},
    }
    (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    prompt = {"name": EXPERIMENT, "type": "text", "prompt": kit_template(kit)}
    (root / "prompts" / f"{EXPERIMENT}.yaml").write_text(yaml.safe_dump(prompt, sort_keys=False), encoding="utf-8")
    for key in JUDGES:
        text = yaml.safe_dump(judge_evaluator(key), sort_keys=False)
        (root / "evaluators" / f"{key}.yaml").write_text(text, encoding="utf-8")
    convert_dataset(kit_data, root / "datasets" / f"{EXPERIMENT}.jsonl", args.n)
    return root


def run_raw(args: argparse.Namespace, kit: Path, kit_data: Path, workdir: Path, rep: int) -> Measurement:
    """Run raw_fanout.py once."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    env.update(
        BENCH_KIT=str(kit),
        BENCH_PORT=str(args.port),
        BENCH_N=str(args.n),
        BENCH_CONCURRENCY=str(args.concurrency),
        BENCH_MAX_CONNECTIONS=str(args.max_connections),
        BENCH_DATA=str(kit_data),
        BENCH_OUTDIR=str(workdir / "out"),
    )
    cmd = [str(args.python), str(REPO / "bench" / "raw_fanout.py")]
    run = measure_child(cmd, env=env, cwd=workdir, log=workdir / "logs" / f"raw-{rep}.log", timeout_s=1800)
    found = RESULT_LINE.findall(run.output)
    if run.returncode != 0 or not found:
        raise RuntimeError(f"raw_fanout failed ({run.returncode}):\n{run.output[-2000:]}")
    result = json.loads(found[-1])
    eval_s = float(result["eval_s"])
    return Measurement(
        harness="raw_fanout",
        rep=rep,
        n_items=int(result["n_items"]),
        n_ok=int(result["n_ok"]),
        wall_s=round(run.wall_s, 3),
        items_phase_s=round(eval_s, 3),
        peak_rss_mb=run.peak_rss_mb,
        cpu_s=run.cpu_s,
        items_cpu_s=round(run.cpu_between(run.exited_at - eval_s, run.exited_at), 3),
        mean_word_count=None,
        mean_similarity=None,
        returncode=run.returncode,
        detail={"mean_scores": result["mean_scores"]},
    )


def run_scoregate(args: argparse.Namespace, project: Path, workdir: Path, rep: int) -> Measurement:
    """Run `scoregate run w2` once; items phase = the manifest's started_at → finished_at."""
    runs = project / "runs"
    before = run_dirs(runs)
    cmd = [str(args.scoregate), "run", EXPERIMENT, "--no-cache", "--concurrency", str(args.concurrency)]
    cmd += ["--no-mlflow", "--no-langfuse", "-C", str(project)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    run = measure_child(cmd, env=env, cwd=workdir, log=workdir / "logs" / f"scoregate-{rep}.log", timeout_s=1800)
    new = sorted(run_dirs(runs) - before)
    if run.returncode != 0 or len(new) != 1:
        raise RuntimeError(f"scoregate failed ({run.returncode}):\n{run.output[-2000:]}")
    manifest = json.loads((new[0] / "manifest.json").read_text(encoding="utf-8"))
    summary = json.loads((new[0] / "summary.json").read_text(encoding="utf-8"))
    started = datetime.fromisoformat(manifest["started_at"]).timestamp()
    finished = datetime.fromisoformat(manifest["finished_at"]).timestamp()
    scores = summary["scores"]
    shutil.rmtree(new[0])
    return Measurement(
        harness="scoregate",
        rep=rep,
        n_items=int(summary["run_metrics"]["items"]),
        n_ok=min(int(scores[k]["n_measured"]) for k in JUDGES),
        wall_s=round(run.wall_s, 3),
        items_phase_s=round(finished - started, 3),
        peak_rss_mb=run.peak_rss_mb,
        cpu_s=run.cpu_s,
        items_cpu_s=round(run.cpu_between(started, finished), 3),
        mean_word_count=None,
        mean_similarity=None,
        returncode=run.returncode,
        detail={
            "mean_scores": {k: scores[k]["mean"] for k in JUDGES},
            "startup_s": round(started - run.launched_at, 3),
            "after_items_s": round(run.exited_at - finished, 3),
        },
    )


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def summarize(measurements: list[Measurement]) -> dict[str, Any]:
    """Medians per harness, the ratio scoregate/raw (from medians and paired per repeat) and the verdict."""
    table: dict[str, Any] = {}
    for harness in ("raw_fanout", "scoregate"):
        runs = [m for m in measurements if m.harness == harness]
        table[harness] = {
            "items_per_s": _median([m.items_per_s for m in runs]),
            "whole_per_s": _median([m.whole_per_s for m in runs]),
            "peak_rss_mb": _median([m.peak_rss_mb for m in runs]),
            "items_cpu_ms_per_item": _median([m.items_cpu_ms_per_item for m in runs]),
            "all_items_per_s": [round(m.items_per_s, 1) for m in runs],
            "all_ok": all(m.n_ok == m.n_items for m in runs),
            "mean_scores": runs[-1].detail["mean_scores"],
        }
    paired = []
    for rep in sorted({m.rep for m in measurements}):
        by = {m.harness: m for m in measurements if m.rep == rep}
        paired.append(by["scoregate"].items_per_s / by["raw_fanout"].items_per_s)
    ratio = round(table["scoregate"]["items_per_s"] / table["raw_fanout"]["items_per_s"], 3)
    whole = round(table["scoregate"]["whole_per_s"] / table["raw_fanout"]["whole_per_s"], 3)
    return {
        "medians": table,
        "ratio_items_phase": ratio,
        "ratio_items_phase_paired_median": _median(paired),
        "ratio_whole_command": whole,
        "verdict": {"target": f"scoregate >= {TARGET} x raw fan-out loop (items phase)", "holds": ratio >= TARGET},
    }


def markdown(report: dict[str, Any]) -> str:
    """The short table of a W2 run."""
    cfg, res = report["config"], report["results"]
    lines = [
        f"# W2 (task + three judges per item) — {report['date']}",
        "",
        f"Machine: {report['machine']}. Mock: this script's nginx+echo on 127.0.0.1:{cfg['port']} "
        f"({cfg['latency_ms']} ms per reply). {cfg['n']} items, {cfg['concurrency']} in flight, "
        f"{cfg['max_connections']} HTTP connections, median of {cfg['repeats']} interleaved repeats. "
        f"scoregate: `{cfg['scoregate_command']}`; raw: `bench/raw_fanout.py` (httpx2; task, then the three "
        "judges gathered).",
        "",
        "| harness | items/s (items phase) | items/s (whole command) | peak RSS MB | CPU ms/item (items) "
        "| per-repeat items/s | mean judge scores |",
        "| --- | --: | --: | --: | --: | --- | --- |",
    ]
    for name, row in res["medians"].items():
        per = ", ".join(f"{v:.1f}" for v in row["all_items_per_s"])
        means = ", ".join(f"{k} {v:.2f}" for k, v in row["mean_scores"].items())
        lines.append(
            f"| {name} | {row['items_per_s']:.1f} | {row['whole_per_s']:.1f} | {row['peak_rss_mb']:.1f} "
            f"| {row['items_cpu_ms_per_item']:.2f} | {per} | {means} |"
        )
    holds = "yes" if res["verdict"]["holds"] else "**no**"
    lines += [
        "",
        "| target | value | holds |",
        "| --- | --: | --- |",
        f"| {res['verdict']['target']} | {res['ratio_items_phase']:.3f} (paired per repeat "
        f"{res['ratio_items_phase_paired_median']:.3f}; whole command {res['ratio_whole_command']:.3f}) | {holds} |",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run W2, print and write the results; return the exit code."""
    args = _args(argv)
    if missing := missing_packages():
        print(f"error: the mock needs {', '.join(missing)}; install with:\n  {INSTALL_HINT}", file=sys.stderr)
        return 2
    kit = Path(os.environ.get("BENCH_KIT", str(REPO / ".." / "shared" / "bench"))).resolve()
    if not (kit / "common.py").is_file():
        print(f"error: no bench kit at {kit} (set BENCH_KIT)", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="scoregate-w2-"))
    (workdir / "logs").mkdir()
    load_before = os.getloadavg()[0]
    try:
        kit_data = generate_kit_data(kit, args.n, workdir / f"kit-data-{args.n}.jsonl")
        project = write_project(workdir / "project", kit=kit, kit_data=kit_data, args=args)
        bytecode = use_bytecode_cache(args.python, REPO / "src")
        subprocess.run(
            [str(args.python), "-c", "import httpx, scoregate.app.run.experiment"], check=True
        )  # warm the cache
        measurements: list[Measurement] = []
        with W2Mock(workdir / "mock", args.port, args.latency_ms):
            for rep in range(args.repeats):
                order = ["raw_fanout", "scoregate"] if rep % 2 == 0 else ["scoregate", "raw_fanout"]
                for harness in order:
                    if harness == "raw_fanout":
                        m = run_raw(args, kit, kit_data, workdir, rep)
                    else:
                        m = run_scoregate(args, project, workdir, rep)
                    print(
                        f"  rep {rep} {harness:10s} {m.items_per_s:6.1f} items/s (items)  {m.whole_per_s:6.1f} "
                        f"(whole)  ok {m.n_ok}/{m.n_items}  RSS {m.peak_rss_mb:.0f} MB",
                        flush=True,
                    )
                    measurements.append(m)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{os.cpu_count()} CPUs ({platform.machine()}), shared; load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after; bytecode cache {bytecode}",
        "config": {
            "n": args.n,
            "concurrency": args.concurrency,
            "max_connections": args.max_connections,
            "repeats": args.repeats,
            "port": args.port,
            "latency_ms": args.latency_ms,
            "scoregate_command": f"scoregate run w2 --no-cache --concurrency {args.concurrency} --no-mlflow "
            "--no-langfuse -C PROJECT",
        },
        "runs": [m.to_dict() for m in measurements],
        "results": summarize(measurements),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "w2.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    text = markdown(report)
    (args.out / "w2.md").write_text(text, encoding="utf-8")
    print("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
