"""Bench: what writing every item as an MLflow evaluation row adds to a 1,000-item run.

A 1,000-item summarization run (the six smoke items repeated under new ids; the task model and three judges
answered by the tests' scripted OpenAI-compatible server, so model time is near zero and the ratio is the
worst case) runs through `run_experiment` with MLflow mirroring into a fresh sqlite store (schema created
beforehand, so its one-off migration is not counted). Then `log_item_rows` writes the rows of that run.

    PYTHONPATH=src .venv/bin/python bench/eval_rows_cost.py             # ~3 min
    PYTHONPATH=src .venv/bin/python bench/eval_rows_cost.py --items 100 --out /tmp/x
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


from scoregate.app.run.experiment import RunOptions, run_experiment  # noqa: E402
from scoregate.sinks.mlflow.eval_rows import log_item_rows  # noqa: E402
from support.report_runs import summarization_project  # noqa: E402
from support.scripted_openai import ScriptedOpenAI  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scoregate-rows-bench-") as tmp:
        base = Path(tmp)
        os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{base / 'mlflow.db'}"
        from mlflow.tracking import MlflowClient

        MlflowClient().search_experiments()  # create the schema now: its migration is a one-off, not per run
        server = ScriptedOpenAI()
        try:
            project = summarization_project(base / "project", server)
            dataset = project / "datasets" / "smoke_v1.jsonl"
            seeds = [json.loads(line) for line in dataset.read_text(encoding="utf-8").splitlines()]
            with dataset.open("w", encoding="utf-8") as handle:
                for n in range(args.items):
                    item = dict(seeds[n % len(seeds)], id=f"{seeds[n % len(seeds)]['id']}-{n:05d}")
                    handle.write(json.dumps(item, ensure_ascii=False) + "\n")
            options = RunOptions(
                mirrors=RunOptions.Mirrors(off=frozenset({"langfuse"})), use_cache=False, concurrency=8
            )
            start = time.perf_counter()
            outcome = run_experiment(project, "smoke", options)
            run_s = time.perf_counter() - start
        finally:
            server.close()
        assert "mlflow" in outcome.mirrors, outcome.mirror_errors
        start = time.perf_counter()
        rows = log_item_rows(outcome.store, project_root=project, mlflow_run_id=outcome.mirrors["mlflow"])
        rows_s = time.perf_counter() - start
    result = {
        "items": args.items,
        "run_with_mlflow_mirror_s": round(run_s, 1),
        "eval_rows_s": round(rows_s, 1),
        "eval_rows_ms_per_item": round(1000 * rows_s / rows, 1),
        "added_percent": round(100 * rows_s / run_s, 1),
        "rows": rows,
        "note": "model replies are scripted (near-zero latency): the worst case for the ratio",
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "eval_rows_cost.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
