"""`runs show` of a 100,000-item run: time to the first line and to the last, against reading the file, in one run.

Usage (from the repo root):  .venv/bin/python bench/show_items.py [--n 100000] [--repeats 3] [--run-dir DIR]

Without --run-dir it writes a run of N items in the W1 shape (the bench kit's texts as inputs, the kit mock's reply
as output, word count and similarity scores, one model call each) through scoregate's own `RunStore.append`, so the
lines are the ones a real run writes. Then, interleaved (the order rotating every repeat), each command as a child
process with stdout on a pipe, as a pager or a CI log reads it:

  reference `wc -l`     `wc -l results.jsonl` (reading the file, nothing parsed)
  reference parse       `python -c` parsing every line with json.loads (what listing every item must at least do)
  table                 `scoregate runs show RUN --items` (the default table, 7 lines an item)
  lines                 `scoregate runs show RUN --compact` (one line an item)
  json                  `scoregate runs show RUN --items --json`

Targets at 100,000 items (issue 26): the first line in under 2 s; every item listed in under 20 s by `--compact` and
`--json`. Both are also given as ratios to the references measured in the same run. Results: bench/results/
show_items.json and .md (machine, load average before and after each command).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harnesses import use_bytecode_cache
from scoregate_project import generate_kit_data, write_project

REPO = Path(__file__).resolve().parents[1]
FIRST_PAGE_S, LISTING_S = 2.0, 20.0
PARSE_ALL = "import json, sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\nprint('parsed')\n"


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000, help="items in the written run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--run-dir", type=Path, default=None, help="an existing run to show instead of writing one")
    parser.add_argument("--table-timeout", type=float, default=600.0, help="seconds the whole table may take")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--name", default="show_items")
    parser.add_argument("--python", type=Path, default=REPO / ".venv" / "bin" / "python")
    parser.add_argument("--scoregate", type=Path, default=REPO / ".venv" / "bin" / "scoregate")
    return parser.parse_args(argv)


def write_run(root: Path, n: int, kit: Path) -> Path:
    """Write the W1 project under `root` and a run of `n` of its items in `root/runs/`; return the run's directory."""
    sys.path.insert(0, str(REPO / "src"))
    from scoregate.store.records import CallRecord, ItemResult, Score
    from scoregate.store.run_store import RunStore

    data = generate_kit_data(kit, n, root.parent / f"kit-{n}.jsonl")
    write_project(root, kit=kit, kit_data=data, n=n, port=18000, concurrency=32)
    reply = json.loads((kit / "mock_response.json").read_text(encoding="utf-8"))["choices"][0]["message"]["content"]
    store = RunStore.create(root / "runs", "w1-bench", {"run_id": "w1-bench", "status": "finished", "receipts": {}})
    with data.open(encoding="utf-8") as lines:
        for index, line in enumerate(lines):
            row = json.loads(line)
            call = CallRecord(purpose="task", model="mock", endpoint="http://127.0.0.1:18000/v1", latency_ms=12.5,
                              tokens_in=210, tokens_out=80, started_at="2026-11-29T00:00:00+00:00")  # fmt: skip
            scores = [Score("word_count", len(reply.split()), "numeric", "w1_counters"),
                      Score("similarity", round(0.2 + (index % 7) / 100, 3), "numeric", "w1_counters")]  # fmt: skip
            store.append(ItemResult(index, row["id"], "w1@local", {"text": row["text"]}, reply,
                                    expected_output=row["expected"], scores=scores, calls=[call]))  # fmt: skip
    store.close()
    return store.directory


def measure(cmd: list[str], *, timeout_s: float) -> dict[str, Any]:
    """Run `cmd` with stdout on a pipe: wall time, time to its first stdout line, lines, peak RSS (wait4)."""
    load_before = round(os.getloadavg()[0], 2)
    launched = time.monotonic()
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    stdout, first, lines = proc.stdout, [], [0]

    def drain() -> None:
        for _ in iter(stdout.readline, b""):
            if not first:
                first.append(time.monotonic() - launched)
            lines[0] += 1

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    killer = threading.Timer(timeout_s, proc.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    wall = time.monotonic() - launched
    reader.join()
    return {
        "returncode": os.waitstatus_to_exitcode(status),
        "first_line_s": round(first[0], 3) if first else None,
        "wall_s": round(wall, 3),
        "lines": lines[0],
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "load_before": load_before,
        "load_after": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    """Write (or take) the run, measure every command `--repeats` times interleaved, write the results."""
    args = _args(argv)
    kit = Path(os.environ.get("BENCH_KIT", str(REPO / ".." / "shared" / "bench"))).resolve()
    machine: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip(),
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
        "bytecode_cache": use_bytecode_cache(args.python, REPO / "src"),
    }
    with tempfile.TemporaryDirectory(prefix="scoregate-show-") as tmp:
        run_dir = args.run_dir or write_run(Path(tmp) / "project", args.n, kit)
        results = run_dir / "results.jsonl"
        show = [str(args.scoregate), "runs", "show", run_dir.name, "-C", str(run_dir.parents[1])]
        commands = {
            "reference: wc -l": (["wc", "-l", str(results)], 600.0),
            "reference: parse every line": ([str(args.python), "-c", PARSE_ALL, str(results)], 600.0),
            "table (--items)": ([*show, "--items"], args.table_timeout),
            "lines (--compact)": ([*show, "--compact"], 600.0),
            "json (--items --json)": ([*show, "--items", "--json"], 600.0),
        }
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in commands}
        names = list(commands)
        for repeat in range(args.repeats):
            for name in names[repeat % len(names) :] + names[: repeat % len(names)]:
                cmd, timeout_s = commands[name]
                done = measure(cmd, timeout_s=timeout_s)
                if done["returncode"] != 0:
                    raise RuntimeError(f"{' '.join(cmd)} failed: {done}")
                runs[name].append(done)
                print(f"  {name:28s} {json.dumps(done)}", flush=True)
        items, size = sum(1 for _ in results.open("rb")), results.stat().st_size
    machine["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    medians = {
        name: {key: statistics.median(m[key] for m in measured if m[key] is not None) for key in
               ("first_line_s", "wall_s", "peak_rss_mb")}
        for name, measured in runs.items()
    }  # fmt: skip
    parse_s = medians["reference: parse every line"]["wall_s"]
    ratios = {
        name: {"first_line_vs_parse": round(m["first_line_s"] / parse_s, 3),
               "whole_vs_parse": round(m["wall_s"] / parse_s, 2)}
        for name, m in medians.items()
        if not name.startswith("reference")
    }  # fmt: skip
    verdicts = {
        "first line under 2 s (table)": medians["table (--items)"]["first_line_s"] < FIRST_PAGE_S,
        "every item under 20 s (--compact)": medians["lines (--compact)"]["wall_s"] < LISTING_S,
        "every item under 20 s (--json)": medians["json (--items --json)"]["wall_s"] < LISTING_S,
    }
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "command": f".venv/bin/python bench/show_items.py --n {args.n} --repeats {args.repeats}",
        "items": items,
        "results_bytes": size,
        "runs": runs,
        "medians": medians,
        "ratios": ratios,
        "verdicts": verdicts,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (args.out / f"{args.name}.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    return 0


def markdown(report: dict[str, Any]) -> str:
    """The results as a markdown table with the machine, the load and the verdicts."""
    m = report["machine"]
    lines = [
        f"# `runs show` of a {report['items']:,}-item run ({report['results_bytes'] / 1e6:.0f} MB of results)",
        "",
        f"Recorded {report['date']}, commit {m['commit']}; {m['cpus']} CPUs shared with other work, load average "
        f"{m['loadavg_before'][0]} before and {m['loadavg_after'][0]} after (each command's own in the JSON).",
        f"Reproduce: `{report['command']}`. Medians of the interleaved repeats; stdout on a pipe.",
        "",
        "| command | first line | whole listing | peak RSS | first line / parse | whole / parse |",
        "| --- | --: | --: | --: | --: | --: |",
    ]
    for name, med in report["medians"].items():
        ratio = report["ratios"].get(name)
        first = "—" if name.startswith("reference") else f"{med['first_line_s']:.2f} s"
        ratios = f"{ratio['first_line_vs_parse']:.3f} | {ratio['whole_vs_parse']:.2f}" if ratio else "— | —"
        lines.append(f"| {name} | {first} | {med['wall_s']:.2f} s | {med['peak_rss_mb']:.0f} MB | {ratios} |")
    lines += ["", *(f"- {k}: {'holds' if v else 'does not hold'}" for k, v in report["verdicts"].items()), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
