"""Extraction-track throughput: `scoregate run` of the extraction track vs the core W1 bench, one invocation.

Target (issue 5): against a mock endpoint answering schema-valid JSON, the extraction run's throughput stays
within 10% of the core benchmark's (structured output and field matching must not become the bottleneck).

Both runs use the same latency, concurrency, store and flags:
- core: the W1 summarization project of bench/throughput.py (kit nginx mock, port 18200 at 200 ms);
- extraction: N items cycling through datasets/extraction_v1.jsonl (new ids; texts, schemas, references and
  alternatives kept), the shipped `extraction` prompt (each item's schema sent as json_schema response_format),
  the shipped extraction_v1 evaluator and the shipped experiment's gates, against this script's own nginx mock
  (port 18400 at 200 ms, 18300 at 0 ms). The mock reads the schema's title in the request and answers with the
  expected JSON of that domain's first item: every reply is valid for the item's schema, and field matching
  meets exact, partial and wrong values as the item's own reference differs from that domain's first one.

Usage (from the repo root):  .venv/bin/python bench/extraction_throughput.py [--n 2000] [--repeats 3] [--fast]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml
from harnesses import BenchSetup, Measurement, measure_child, run_dirs, run_scoregate, use_bytecode_cache
from mock_endpoint import INSTALL_HINT, NGINX, MockEndpoint, missing_packages
from profile_scoregate import _LINE_NO, RATE_HZ, _phase, _wrapped
from throughput import _kit, _machine, _setup

REPO = Path(__file__).resolve().parents[1]
SHIPPED_DATASET = REPO / "datasets" / "extraction_v1.jsonl"
EXPERIMENT = "extraction_bench"
CORE, EXTRACTION = "core_w1", "extraction"
TARGET = 0.9
EXTRACTION_PORTS = {0: 18300, 200: 18400}
"""Latency in ms -> port of this script's extraction mock."""
CORE_PORTS = {0: 18000, 200: 18200}
"""Latency in ms -> port of the kit's W1 mock."""


def extraction_items(n: int) -> Iterator[dict[str, Any]]:
    """Yield `n` items cycling through the shipped extraction dataset, each under a new id."""
    shipped = [json.loads(line) for line in SHIPPED_DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]
    for i in range(n):
        item = shipped[i % len(shipped)]
        yield {**item, "id": f"{item['id']}-r{i // len(shipped):04d}"}


def reply_bodies() -> dict[str, str]:
    """Return, per schema title, the chat.completion the mock answers: that domain's first reference as JSON."""
    bodies: dict[str, str] = {}
    for line in SHIPPED_DATASET.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        title = item["input"]["schema"]["title"]
        if title in bodies:
            continue
        content = json.dumps(item["expected_output"], ensure_ascii=False)
        message = {"role": "assistant", "content": content, "refusal": None}
        body = {
            "id": "chatcmpl-mock-extraction",
            "object": "chat.completion",
            "created": 1700000000,
            "model": "mock",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 420, "completion_tokens": 80, "total_tokens": 500},
        }
        bodies[title] = json.dumps(body, separators=(",", ":"))
    return bodies


def _nginx_quoted(text: str) -> str:
    """Return `text` as an nginx single-quoted string the echo module prints back unchanged."""
    # These characters only occur inside JSON strings, where a \\u escape reads back as the same character;
    # `$` would start an nginx variable and a backslash is an escape in nginx's quoted strings.
    for char, escape in (("\\", "\\\\"), ("'", "\\u0027"), ("$", "\\u0024")):
        text = text.replace(char, escape)
    return f"'{text}'"


def _title_regex(title: str) -> str:
    return '~"title": ?"' + title + '"'


def nginx_config(prefix: Path, bodies: dict[str, str]) -> str:
    """Return the nginx config of the extraction mock: one reply per schema title, 0 ms and 200 ms ports."""
    # The request carries the schema in response_format: `"title": "Invoice"` picks the invoice reply.
    entries = "\n".join(
        f"    {_nginx_quoted(_title_regex(title))} {_nginx_quoted(body)};" for title, body in bodies.items()
    )
    servers = ""
    for latency_ms, port in EXTRACTION_PORTS.items():
        sleep = f"echo_sleep {latency_ms / 1000};" if latency_ms else ""
        servers += f"""
  server {{
    listen 127.0.0.1:{port} reuseport backlog=4096;
    location = /v1/chat/completions {{
      if ($request_method != POST) {{ return 405; }}
      echo_read_request_body;
      {sleep}
      echo $extraction_reply;
    }}
    location / {{ return 404; }}
  }}"""
    tmp = prefix / "tmp"
    return f"""load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log warn;
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
  client_max_body_size 8m;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  map $request_body $extraction_reply {{
    default '{{"error": {{"message": "no schema title of extraction_v1 in the request"}}}}';
{entries}
  }}{servers}
}}
"""


def _post(port: int, schema: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    body = {
        "model": "mock",
        "messages": [{"role": "user", "content": "ping"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=5) as response:
        payload = json.loads(response.read())
    return time.perf_counter() - started, payload


class ExtractionMock:
    """Context manager: start this script's nginx extraction mock under `prefix`, check every reply, stop it."""

    def __init__(self, prefix: Path) -> None:
        self.prefix = prefix
        self.conf = prefix / "nginx.conf"

    def __enter__(self) -> ExtractionMock:
        for sub in ("logs", "tmp"):
            (self.prefix / sub).mkdir(parents=True, exist_ok=True)
        self.conf.write_text(nginx_config(self.prefix, reply_bodies()), encoding="utf-8")
        started = subprocess.run([str(NGINX), "-p", str(self.prefix), "-c", str(self.conf)], capture_output=True)
        if started.returncode != 0:
            ports = sorted(EXTRACTION_PORTS.values())
            raise RuntimeError(f"the extraction mock (nginx, ports {ports}) did not start: {started.stderr.decode()}")
        try:
            self._check()
        except BaseException:
            self._stop()
            raise
        return self

    def _check(self) -> None:
        """Fail unless every port answers each domain with a reply valid for that domain's schema, in time."""
        firsts: dict[str, dict[str, Any]] = {}
        for item in extraction_items(len(SHIPPED_DATASET.read_text(encoding="utf-8").splitlines())):
            firsts.setdefault(item["input"]["schema"]["title"], item)
        deadline = time.monotonic() + 10
        for latency_ms, port in EXTRACTION_PORTS.items():
            for title, item in firsts.items():
                while True:
                    try:
                        elapsed, payload = _post(port, item["input"]["schema"])
                        break
                    except OSError:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.2)
                content = json.loads(payload["choices"][0]["message"]["content"])
                if content != item["expected_output"] or elapsed < latency_ms / 1000 * 0.9:
                    raise RuntimeError(f"extraction mock on {port}: wrong reply for {title!r} ({elapsed:.3f} s)")

    def _stop(self) -> None:
        """Stop the nginx master this mock started and wait (up to 5 s) until its pid file is gone."""
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


def write_extraction_project(root: Path, *, n: int, port: int, concurrency: int) -> Path:
    """Write a project running the shipped extraction prompt, evaluator and gates on `n` items; return `root`."""
    for sub in ("prompts", "evaluators", "datasets"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))
    gate_names = shipped["experiments"]["extraction"].get("gates", [])
    config = {
        "project": "scoregate-extraction-bench",
        "settings": {"model": "mock", "judge_model": "mock", "concurrency": concurrency},
        "models": {
            "mock": {
                "provider": "openai",
                "model": "mock",
                "base_url": f"http://127.0.0.1:{port}/v1",
                "max_connections": concurrency,
                "max_retries": 0,
                "timeout_s": 60,
            }
        },
        "gates": [g for g in shipped.get("gates", []) if g["name"] in gate_names],
        "experiments": {
            EXPERIMENT: {
                "dataset": EXPERIMENT,
                "prompt": "extraction",
                "evaluators": ["extraction_v1"],
                "gates": gate_names,
            }
        },
    }
    (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    shutil.copy(REPO / "prompts" / "extraction.yaml", root / "prompts" / "extraction.yaml")
    shutil.copy(REPO / "evaluators" / "extraction_v1.yaml", root / "evaluators" / "extraction_v1.yaml")
    shutil.copy(REPO / "datasets" / "extraction_v1.yaml", root / "datasets" / f"{EXPERIMENT}.yaml")
    with (root / "datasets" / f"{EXPERIMENT}.jsonl").open("w", encoding="utf-8") as sink:
        for item in extraction_items(n):
            sink.write(json.dumps(item, ensure_ascii=False) + "\n")
    return root


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def _mean(scores: dict[str, Any], key: str) -> float | None:
    value = scores.get(key, {}).get("mean")
    return None if value is None else round(float(value), 4)


def run_extraction(setup: BenchSetup, rep: int) -> Measurement:
    """Run `scoregate run` on the extraction project once; the items phase is the manifest's started → finished."""
    runs = setup.project / "runs"
    before = run_dirs(runs)
    cmd = [str(setup.scoregate), "run", EXPERIMENT, "--no-cache", "--concurrency", str(setup.concurrency)]
    cmd += ["--no-mlflow", "--no-langfuse", "-C", str(setup.project)]
    log = setup.workdir / "logs" / f"extraction-{setup.n}-{rep}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    run = measure_child(cmd, env=env, cwd=setup.workdir, log=log, timeout_s=setup.timeout_s)
    new = sorted(run_dirs(runs) - before)
    # Exit code 3 would be a failed gate; any finished run with a summary is a measurement.
    if len(new) != 1 or not (new[0] / "summary.json").is_file():
        tail = "\n".join(run.output.splitlines()[-15:])
        raise RuntimeError(f"extraction run: no finished run (exit code {run.returncode}); last lines:\n{tail}")
    manifest = json.loads((new[0] / "manifest.json").read_text(encoding="utf-8"))
    summary = json.loads((new[0] / "summary.json").read_text(encoding="utf-8"))
    started, finished = _epoch(manifest["started_at"]), _epoch(manifest["finished_at"])
    scores = summary["scores"]
    measured = {key: int(scores[key]["n_measured"]) for key in ("eqs", "schema_valid", "field_f1_partial")}
    measurement = Measurement(
        harness=EXTRACTION,
        rep=rep,
        n_items=int(summary["run_metrics"]["items"]),
        n_ok=min(measured.values()),
        wall_s=round(run.wall_s, 3),
        items_phase_s=round(finished - started, 3),
        peak_rss_mb=run.peak_rss_mb,
        cpu_s=run.cpu_s,
        items_cpu_s=round(run.cpu_between(started, finished), 3),
        mean_word_count=None,
        mean_similarity=None,
        returncode=run.returncode,
        detail={
            "items_phase": "manifest started_at -> finished_at (preflight, items, store close)",
            "startup_s": round(started - run.launched_at, 3),
            "after_items_s": round(run.exited_at - finished, 3),
            "errors": int(summary["run_metrics"]["error_count"]),
            "n_measured": measured,
            "means": {k: _mean(scores, k) for k in ("eqs", "schema_valid", "field_f1_partial", "exact_match")},
            "run_id": manifest["run_id"],
        },
    )
    shutil.rmtree(new[0])
    return measurement


def _core(setup: BenchSetup, rep: int) -> Measurement:
    measurement = run_scoregate(setup, rep)[0]
    measurement.harness = CORE
    return measurement


def _show(m: Measurement) -> None:
    print(
        f"  rep {m.rep} {m.harness:10s} {m.items_per_s:6.1f} items/s (items phase) {m.whole_per_s:6.1f} (whole)  "
        f"peak RSS {m.peak_rss_mb:6.1f} MB  CPU ms/item {m.items_cpu_ms_per_item:4.2f} (items) "
        f"{m.cpu_ms_per_item:4.2f} (whole)  startup {m.detail['startup_s']:.1f}s after {m.detail['after_items_s']:.1f}s"
        f"  scored {m.n_ok}/{m.n_items}",
        flush=True,
    )


def medians(measurements: list[Measurement]) -> dict[str, dict[str, Any]]:
    """Return, per run kind, the median of each figure over the repeats and the per-repeat rates."""
    out: dict[str, dict[str, Any]] = {}
    for harness in (CORE, EXTRACTION):
        runs = [m for m in measurements if m.harness == harness]
        row: dict[str, Any] = {"repeats": len(runs)}
        for key in ("items_per_s", "whole_per_s", "peak_rss_mb", "items_cpu_ms_per_item", "cpu_ms_per_item"):
            row[key] = round(statistics.median(getattr(m, key) for m in runs), 3)
        for key in ("startup_s", "after_items_s"):
            row[key] = round(statistics.median(m.detail[key] for m in runs), 3)
        row["all_items_per_s"] = [round(m.items_per_s, 1) for m in runs]
        row["all_whole_per_s"] = [round(m.whole_per_s, 1) for m in runs]
        row["all_scored"] = all(m.n_ok == m.n_items for m in runs)
        out[harness] = row
    return out


def ratios(measurements: list[Measurement], table: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Return extraction/core from the medians and paired repeat by repeat, items phase and whole command."""
    out: dict[str, Any] = {}
    for key, attr in (("items_phase", "items_per_s"), ("whole_command", "whole_per_s")):
        paired = []
        for rep in sorted({m.rep for m in measurements}):
            by = {m.harness: m for m in measurements if m.rep == rep}
            paired.append(getattr(by[EXTRACTION], attr) / getattr(by[CORE], attr))
        out[key] = {
            "of_medians": round(table[EXTRACTION][attr] / table[CORE][attr], 3),
            "paired": [round(r, 3) for r in paired],
            "paired_median": round(statistics.median(paired), 3),
        }
    return out


def scoring_checks(measurements: list[Measurement]) -> dict[str, Any]:
    """Return whether every extraction run scored every item with a schema-valid reply and no error."""
    runs = [m for m in measurements if m.harness == EXTRACTION]
    return {
        "eqs_measured_on_every_item": all(m.detail["n_measured"]["eqs"] == m.n_items for m in runs),
        "every_reply_schema_valid": all(m.detail["means"]["schema_valid"] == 1.0 for m in runs),
        "no_errors": all(m.detail["errors"] == 0 for m in runs),
        "means": runs[0].detail["means"] if runs else None,
        "same_means_every_repeat": len({json.dumps(m.detail["means"]) for m in runs}) == 1,
    }


def folded_split(path: Path) -> tuple[Counter[str], dict[str, Counter[str]]]:
    """Return py-spy raw samples per phase, and per frame (inclusive) within the items and summary phases."""
    by_phase: Counter[str] = Counter()
    inclusive: dict[str, Counter[str]] = {"items": Counter(), "summary": Counter()}
    for line in path.read_text(encoding="utf-8").splitlines():
        stack, _, count_text = line.rpartition(" ")
        frames = [_LINE_NO.sub(")", f) for f in stack.split(";")]
        if frames and frames[-1].startswith("_worker (concurrent/futures/thread.py"):
            continue  # an idle thread-pool worker
        phase = _phase(frames)
        by_phase[phase] += int(count_text)
        if phase in inclusive:
            for frame in set(frames):
                inclusive[phase][frame] += int(count_text)
    return by_phase, inclusive


def profile(setups: dict[str, BenchSetup], run: dict[str, Any], spy: Path, top: int = 40) -> dict[str, Any]:
    """Profile one run of each under py-spy (not timed for the table): CPU per phase, and what extraction adds."""
    phases: dict[str, dict[str, Any]] = {}
    frames: dict[str, dict[str, Counter[str]]] = {}
    for name, setup in setups.items():
        folded = setup.workdir / f"profile-{name}.folded"
        wrapper = [str(spy), "record", "-r", str(RATE_HZ), "-f", "raw", "-o", str(folded), "--"]
        measurement = run[name](_wrapped(setup, wrapper), 99)
        by_phase, frames[name] = folded_split(folded)
        phases[name] = {
            "items_per_s_under_py_spy": round(measurement.items_per_s, 1),
            "cpu_s": {p: round(by_phase[p] / RATE_HZ, 2) for p in ("imports", "other", "items", "summary")},
            "items_cpu_ms_per_item": round(by_phase["items"] / RATE_HZ * 1000 / setup.n, 2),
        }
        print(f"profiled {name}: {json.dumps(phases[name])}", flush=True)
    n = setups[EXTRACTION].n

    def ms_per_item(name: str, frame: str) -> float:
        return frames[name]["items"][frame] / RATE_HZ * 1000 / n

    every_stack = 0.97 * max(frames[EXTRACTION]["items"].values(), default=1)
    # Frames on (nearly) every stack of the items phase (the event loop and what calls it) say nothing.
    extra = sorted(
        (
            f
            for f in set(frames[EXTRACTION]["items"]) | set(frames[CORE]["items"])
            if frames[EXTRACTION]["items"][f] < every_stack
        ),
        key=lambda f: ms_per_item(CORE, f) - ms_per_item(EXTRACTION, f),
    )
    summary_total = max(frames[EXTRACTION]["summary"].values(), default=1)
    return {
        "phases": phases,
        "items_extra_ms_per_item": [
            [
                round(ms_per_item(EXTRACTION, f) - ms_per_item(CORE, f), 2),
                round(ms_per_item(EXTRACTION, f), 2),
                round(ms_per_item(CORE, f), 2),
                f,
            ]
            for f in extra[:top]
        ],
        "extraction_summary_cpu_s": [
            [round(c / RATE_HZ, 2), f]
            for f, c in frames[EXTRACTION]["summary"].most_common()
            if c < 0.97 * summary_total
        ][:top],
    }


def markdown(results: dict[str, Any]) -> str:
    """Return the recorded results as a short markdown page."""
    cfg, table, ratio, checks = results["config"], results["medians"], results["ratios"], results["scoring_checks"]
    lines = [
        f"# Extraction-track throughput — {results['date']}",
        "",
        f"Machine: {results['machine']['note']}. {cfg['n']} items per run, concurrency {cfg['concurrency']}, "
        f"{cfg['latency_ms']} ms per mock reply, median of {cfg['repeats']} interleaved repeats.",
        "",
        f"- **{CORE}**: {cfg['core_command']} on the kit's W1 project (the core benchmark, "
        f"`results/throughput.md`), kit nginx mock on port {cfg['core_port']}.",
        f"- **{EXTRACTION}**: {cfg['extraction_command']} on {cfg['n']} items cycling through "
        "`datasets/extraction_v1.jsonl` (8 schemas), the shipped `extraction` prompt (schema sent per item as "
        "json_schema response_format), the shipped `extraction_v1` evaluator and the `extraction` experiment's "
        f"gates; this script's nginx mock on port {cfg['extraction_port']} answers each item with its domain's "
        "first reference (valid for the item's schema).",
        "",
        "| run | items/s (items phase) | items/s (whole command) | peak RSS MB | CPU ms/item (items phase) "
        "| CPU ms/item (whole) | startup s | after items s | per-repeat items/s (items phase) |",
        "| --- | --: | --: | --: | --: | --: | --: | --: | --- |",
    ]
    for name, row in table.items():
        lines.append(
            f"| {name} | {row['items_per_s']:.1f} | {row['whole_per_s']:.1f} | {row['peak_rss_mb']:.1f} "
            f"| {row['items_cpu_ms_per_item']:.2f} | {row['cpu_ms_per_item']:.2f} | {row['startup_s']:.2f} "
            f"| {row['after_items_s']:.2f} | {', '.join(str(x) for x in row['all_items_per_s'])} |"
        )
    lines += [
        "",
        "| extraction/core | of the medians | paired per repeat (median) | per repeat |",
        "| --- | --: | --: | --- |",
    ]
    for key, value in ratio.items():
        per = ", ".join(str(x) for x in value["paired"])
        lines.append(f"| {key.replace('_', ' ')} | {value['of_medians']:.3f} | {value['paired_median']:.3f} | {per} |")
    means = checks["means"] or {}
    lines += [
        "",
        f"Scoring really ran: EQS measured on every item of every run: {_yes(checks['eqs_measured_on_every_item'])}; "
        f"every reply schema-valid: {_yes(checks['every_reply_schema_valid'])}; no item error: "
        f"{_yes(checks['no_errors'])}; means (identical every repeat: {_yes(checks['same_means_every_repeat'])}): "
        + ", ".join(f"{k} {v}" for k, v in means.items())
        + ".",
        "",
        "| target | value | holds |",
        "| --- | --: | --- |",
    ]
    for name, verdict in results["verdicts"].items():
        lines.append(f"| {name} | {verdict['value']:.3f} | {_yes(verdict['holds'])} |")
    if results.get("profile"):
        lines += ["", *_profile_lines(results["profile"])]
    return "\n".join(lines) + "\n"


def _profile_lines(profiled: dict[str, Any]) -> list[str]:
    lines = [
        "## Where the CPU goes (py-spy at 250 Hz, one more run of each, not timed for the table)",
        "",
        "| run | imports s | other startup s | items s | summary s | items CPU ms/item |",
        "| --- | --: | --: | --: | --: | --: |",
    ]
    for name, p in profiled["phases"].items():
        cpu = p["cpu_s"]
        lines.append(
            f"| {name} | {cpu['imports']} | {cpu['other']} | {cpu['items']} | {cpu['summary']} "
            f"| {p['items_cpu_ms_per_item']} |"
        )
    lines += ["", "Items phase, what extraction adds per item (inclusive CPU ms/item):", "", "```"]
    lines.append(f"{'extra':>7} {EXTRACTION:>10} {CORE:>8}  frame")
    lines += [f"{d:7.2f} {e:10.2f} {c:8.2f}  {f}" for d, e, c, f in profiled["items_extra_ms_per_item"]]
    lines += ["```", "", f"{EXTRACTION}, summary phase: top frames, inclusive CPU s", "", "```"]
    lines += [f"{s:7.2f}  {frame}" for s, frame in profiled["extraction_summary_cpu_s"]]
    return [*lines, "```"]


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="items per run (default 2000)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats of each run (median kept)")
    parser.add_argument("--fast", action="store_true", help="0 ms mocks (18000 / 18300) instead of 200 ms")
    parser.add_argument(
        "--py-spy", type=Path, default=None, help="py-spy binary: also profile one run of each (not timed)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results", help="where the results go")
    parser.add_argument("--name", default="extraction_throughput", help="results file stem")
    parser.add_argument("--python", type=Path, default=REPO / ".venv" / "bin" / "python")
    parser.add_argument("--scoregate", type=Path, default=REPO / ".venv" / "bin" / "scoregate")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run both benches interleaved, print the table, write <out>/<name>.json and .md; return the exit code."""
    args = _args(argv)
    if missing := missing_packages():
        print(f"error: the mock endpoint needs {', '.join(missing)}; install with:\n  {INSTALL_HINT}", file=sys.stderr)
        return 2
    if not args.scoregate.is_file():
        print(f"error: {args.scoregate} not found; run `make setup` first", file=sys.stderr)
        return 2
    latency_ms = 0 if args.fast else 200
    core_port, extraction_port = CORE_PORTS[latency_ms], EXTRACTION_PORTS[latency_ms]
    kit = _kit()
    workdir = Path(tempfile.mkdtemp(prefix="scoregate-extraction-bench-"))
    (workdir / "logs").mkdir()
    machine = _machine()
    machine["bytecode_cache"] = use_bytecode_cache(args.python, REPO / "src")
    try:
        core = _setup(args, kit, workdir, args.n, core_port)
        project = write_extraction_project(
            workdir / "extraction-project", n=args.n, port=extraction_port, concurrency=args.concurrency
        )
        extraction = BenchSetup(**{**core.__dict__, "port": extraction_port, "project": project})
        # Not measured: warms the page cache so that no first run pays for it.
        subprocess.run([str(args.python), "-c", "import openai, jsonschema, rapidfuzz, scoregate.cli"], check=True)
        measurements = []
        with MockEndpoint(kit, workdir / "mock") as mock, ExtractionMock(workdir / "extraction-mock"):
            print(f"kit mock {mock.note}; extraction mock on {sorted(EXTRACTION_PORTS.values())}; workdir {workdir}")
            print(f"{args.n} items, concurrency {args.concurrency}, {latency_ms} ms, {args.repeats} repeats")
            for rep in range(args.repeats):
                order = [(_core, core), (run_extraction, extraction)]
                for run, setup in order if rep % 2 == 0 else order[::-1]:
                    measurement = run(setup, rep)
                    _show(measurement)
                    measurements.append(measurement)
            mock_note = mock.note
            profiled = (
                profile({CORE: core, EXTRACTION: extraction}, {CORE: _core, EXTRACTION: run_extraction}, args.py_spy)
                if args.py_spy
                else None
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    machine["loadavg_after"] = list(os.getloadavg())
    machine["note"] = (
        f"{machine['cpus']} CPUs ({machine['cpu']}), shared with other processes; load average "
        f"{machine['loadavg_before'][0]:.1f} before, {machine['loadavg_after'][0]:.1f} after; "
        f"bytecode cache {machine['bytecode_cache']}"
    )
    table = medians(measurements)
    ratio = ratios(measurements, table)
    checks = scoring_checks(measurements)
    flags = f"--no-cache --concurrency {args.concurrency} --no-mlflow"
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "config": {
            "n": args.n,
            "concurrency": args.concurrency,
            "repeats": args.repeats,
            "latency_ms": latency_ms,
            "core_port": core_port,
            "extraction_port": extraction_port,
            "kit_mock": mock_note,
            "core_command": f"`scoregate run w1 {flags} -C PROJECT`",
            "extraction_command": f"`scoregate run {EXPERIMENT} {flags} --no-langfuse -C PROJECT`",
            "judged_on": "items phase: run manifest started_at -> finished_at; whole command beside it",
            "peak_rss": "ru_maxrss of the child process from wait4",
        },
        "runs": [m.to_dict() for m in measurements],
        "medians": table,
        "ratios": ratio,
        "scoring_checks": checks,
        "profile": profiled,
        "verdicts": {
            "extraction >= 0.9 x core (items phase, medians; judged, as in throughput.md)": {
                "value": ratio["items_phase"]["of_medians"],
                "holds": ratio["items_phase"]["of_medians"] >= TARGET,
            },
            "extraction >= 0.9 x core (whole command, medians; reported beside it)": {
                "value": ratio["whole_command"]["of_medians"],
                "holds": ratio["whole_command"]["of_medians"] >= TARGET,
            },
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    text = markdown(results)
    (args.out / f"{args.name}.md").write_text(text, encoding="utf-8")
    print("\n" + text)
    print(f"written: {args.out / (args.name + '.json')} and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
