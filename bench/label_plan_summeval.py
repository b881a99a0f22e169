"""The output of `scoregate plan --labels` on SummEval, for docs/running/planning.md.

The project of `bench/cascade_summeval.py` without its cascade: the strong scripted judge (the rounded human
relevance 90% of the time, else one point off) scores the 800 new summaries; only 40 of them, drawn at random, keep
their human rating (`metadata.human.relevance`, the mean of 3 experts), as if only those had been rated. A summary
passes at relevance 4 or more, for the judge and the humans alike. Prints what `plan --labels 30` printed.

    .venv/bin/python bench/label_plan_summeval.py     # ~30 s
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cascade_summeval as demo  # noqa: E402


def main() -> None:
    cal, new = demo.items()
    human = {i["id"]: i["metadata"]["human"]["relevance"] for i in cal + new}
    rated = set(random.Random(31).sample([i["id"] for i in new], 40))
    for item in new:
        if item["id"] not in rated:
            item["metadata"] = {}
    server = demo.ScriptedOpenAI()
    server.responder = demo.responder(human)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        demo.project(root, server, cal, new)
        judge = root / "evaluators" / f"{demo.JUDGE}.yaml"
        spec = yaml.safe_load(judge.read_text(encoding="utf-8"))
        spec.pop("cascade")
        judge.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
        demo.scoregate(root, "run", "summeval_new", "--no-mlflow", "--no-cache")
        ask = ("--judge-key", "relevance_score", "--human-key", "human_relevance", "--pass-at", "4")
        command, printed = demo.scoregate(root, "plan", "summeval_new", "--labels", "30", *ask)
        print(f"$ {command}\n{printed}")
        _, data = demo.scoregate(root, "plan", "summeval_new", "--labels", "30", *ask, "--json")
        print(json.dumps(json.loads(data)["plan"], indent=2))
    server.close()


if __name__ == "__main__":
    main()
