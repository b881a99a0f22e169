"""The output of `scoregate plan` and of the run's margin warning on SummEval, for docs/running/planning.md.

The project of `bench/cascade_summeval.py` without its cascade: one scripted judge of relevance that answers the
rounded human rating (SummEval, the mean of 3 expert ratings) 70% of the time and one point off otherwise, on each
call (so repeats differ). A regression gate `no_regression` (margin 0.05, against `production`) on the 800 new
items: a first full run is promoted to production (promotions.jsonl), a second is gated against it, then `plan`
runs on both experiments. Prints what each command printed at COLUMNS=80.

    .venv/bin/python bench/plan_summeval.py      # ~1 min
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cascade_summeval as demo  # noqa: E402


def noisy_judge(human: dict[str, float]) -> Any:
    """A judge right 70% of the time per call, else one point off."""
    asked: Counter[str] = Counter()

    def reply(body: dict[str, Any]) -> str:
        schema = demo.request_schema(body)
        if schema is None:
            return "ok"
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        key = demo.MARK.search(text).group(1)  # type: ignore[union-attr]
        asked[key] += 1
        truth = min(5, max(1, int(human[key] + 0.5)))
        rng = demo._rng("noisy", key, asked[key])
        score = truth if rng.random() < 0.7 else min(5, max(1, truth + rng.choice((-1, 1))))
        return json.dumps(demo.json_for_schema(schema, score=score))

    return reply


def main() -> None:
    cal, new = demo.items()
    human = {i["id"]: i["metadata"]["human"]["relevance"] for i in cal + new}
    server = demo.ScriptedOpenAI()
    server.responder = noisy_judge(human)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        demo.project(root, server, cal, new)
        judge = root / "evaluators" / f"{demo.JUDGE}.yaml"
        spec = yaml.safe_load(judge.read_text(encoding="utf-8"))
        spec.pop("cascade")
        judge.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
        config = yaml.safe_load((root / "scoregate.yaml").read_text(encoding="utf-8"))
        config["gates"] = [{
            "name": "no_regression", "metric": "relevance_score", "stat": "paired_noninferiority",
            "compare_to": "production", "margin": 0.05, "op": ">=", "threshold": 0,
        }]  # fmt: skip
        config["experiments"]["summeval_new"]["gates"] = ["no_regression"]
        (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        demo.scoregate(root, "run", "summeval_new", "--repeat", "2", "--no-mlflow", "--no-cache")
        first = demo.latest_run(root, "summeval_new")
        version = json.loads((root / "runs" / first / "manifest.json").read_text())["receipts"]["prompts"]
        record = {"prompt": "summeval-source", "label": "production", "action": "promote"}
        record |= {"version": version["summeval-source"]["version"], "time": "2026-11-29T00:00:00+00:00"}
        (root / "promotions.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
        env = {**os.environ, "COLUMNS": "80"}
        scoregate = str(HERE.parent / ".venv" / "bin" / "scoregate")
        gated = subprocess.run(
            [scoregate, "run", "summeval_new", "--repeat", "2", "--no-mlflow", "--no-cache", "-C", str(root)],
            capture_output=True, text=True, env=env,
        )  # fmt: skip
        print((gated.stdout + gated.stderr).replace(str(root), "<project>"))
        demo.scoregate(root, "run", "summeval_cal", "--limit", "200", "--repeat", "3", "--no-mlflow", "--no-cache")
        for args in (("summeval_new", "--detect", "0.05"), ("summeval_cal", "--detect", "0.1")):
            command, printed = demo.scoregate(root, "plan", *args)
            print(f"$ {command}\n{printed}")
    server.close()


if __name__ == "__main__":
    main()
