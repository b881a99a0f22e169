"""The judge cascade on real human ratings: SummEval relevance, scripted judges with known error rates.

SummEval (`../shared/data/summeval/`, 1,600 CNN/DailyMail summaries, the mean of 3 expert ratings 1-5) is split by
article: the summaries of the first 50 articles are the calibration set, the other 50 articles' are new items. Two
judges answer from a script over loopback (the test suite's OpenAI-compatible server), with known error rates:

- the strong judge answers the rounded human rating 90% of the time, else one point off;
- the first (cheap, 1/20 of the strong judge's price per token) answers each of its 5 samples with the rounded
  human rating with probability 0.95 on an easy item, 0.65 on a middling one and 0.3 on a hard one (half, 30% and
  20% of the items, fixed per item by a hash), else another rating at random.

The real CLI runs the cascade judge over the calibration set, chooses and saves the threshold (`scoregate cascade
--save`), runs the new items, and then counts how many kept items agree with the humans (|answer - human| ≤ 0.5).
Every command's output is kept (COLUMNS=80) in `bench/results/cascade_summeval.md`, the page the docs show.

    .venv/bin/python bench/cascade_summeval.py            # ~3 min on the shared VM
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))

from support.scripted_openai import ScriptedOpenAI, json_for_schema, request_schema  # noqa: E402

DATA = Path(os.environ.get("SHARED_DATA", REPO.parent / "shared" / "data")) / "summeval" / "summeval_expert_1600.json"
JUDGE = "ev_relevance_v1"
TARGET = 0.9
MARK = re.compile(r"Item: (\S+)")
STRONG_PRICE = {"input_cost_per_mtok": 2.5, "output_cost_per_mtok": 10.0}
CHEAP_PRICE = {"input_cost_per_mtok": 0.125, "output_cost_per_mtok": 0.5}
RUBRIC = """Rate the RELEVANCE of a news summary to its article: does it keep the important content and leave out
the rest? 1 = mostly unimportant or missing content, 5 = the important content and nothing else.

Item: {{key}}

<article>
{{source}}
</article>

<summary>
{{summary}}
</summary>
"""


def _rng(*parts: object) -> random.Random:
    return random.Random(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest())


def difficulty(key: str) -> float:
    """The first judge's chance that one sample gives the rounded human rating, fixed per item."""
    u = _rng("difficulty", key).random()
    return 0.95 if u < 0.5 else 0.65 if u < 0.8 else 0.3


def items() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(calibration, new): SummEval summaries as items, split by article."""
    records = json.loads(DATA.read_text(encoding="utf-8"))
    docs = sorted({r["doc_id"] for r in records})
    calibration_docs = set(docs[:50])
    cal, new = [], []
    for r in records:
        key = f"{r['doc_id']}-{r['system_id']}"
        item = {
            "id": key,
            "input": {"key": key, "source": r["source"][:1500]},
            "expected_output": r["system_output"],
            "metadata": {"human": {"relevance": round(r["scores"]["relevance"], 4)}},
        }
        (cal if r["doc_id"] in calibration_docs else new).append(item)
    return cal, new


def project(root: Path, server: ScriptedOpenAI, cal: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    """Write the demo project: two judge models on the scripted server, the cascade judge, two experiments."""
    served = {"provider": "openai", "base_url": server.url, "max_retries": 2, "timeout_s": 30, "max_connections": 16}
    config = {
        "project": "cascade-summeval",
        "settings": {"model": "strong", "judge_model": "strong", "concurrency": 16, "bootstrap_resamples": 200},
        "models": {
            "strong": {**served, "model": "strong-judge", **STRONG_PRICE},
            "cheap": {**served, "model": "cheap-judge", **CHEAP_PRICE},
        },
        "experiments": {
            name: {"dataset": name, "prompt": "summeval-source", "output_from": "expected_output"}
            | {"evaluators": [JUDGE]}
            for name in ("summeval_cal", "summeval_new")
        },
    }
    judge = {
        "kind": "llm_judge", "name": JUDGE, "version": 1,
        "description": "Relevance of a news summary (1-5), with a cheap first judge.",
        "prompt": RUBRIC, "variables": {"key": "input.key", "source": "input.source", "summary": "output"},
        "score": {"key": "relevance_score", "data_type": "numeric", "range": [1, 5]},
        "cascade": {"first_model": "cheap", "samples": 5, "target": TARGET, "delta": 0.1},
    }  # fmt: skip
    prompt = {
        "name": "summeval-source", "type": "chat", "description": "The article (the summaries are given).",
        "messages": [{"role": "user", "content": "{{source}}"}],
    }  # fmt: skip
    for folder in ("datasets", "prompts", "evaluators"):
        (root / folder).mkdir(parents=True)
    (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / "evaluators" / f"{JUDGE}.yaml").write_text(yaml.safe_dump(judge, sort_keys=False), encoding="utf-8")
    (root / "prompts" / "summeval-source.yaml").write_text(yaml.safe_dump(prompt, sort_keys=False), encoding="utf-8")
    for name, rows in (("summeval_cal", cal), ("summeval_new", new)):
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (root / "datasets" / f"{name}.jsonl").write_text(text, encoding="utf-8")


def responder(human: dict[str, float]) -> Any:
    """The two scripted judges (see the module docstring)."""
    asked: Counter[str] = Counter()

    def reply(body: dict[str, Any]) -> str:
        schema = request_schema(body)
        if schema is None:
            return "ok"
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        key = MARK.search(text).group(1)  # type: ignore[union-attr]
        truth = min(5, max(1, int(human[key] + 0.5)))
        others = [v for v in range(1, 6) if v != truth]
        if body["model"] == "strong-judge":
            rng = _rng("strong", key)
            score = truth if rng.random() < 0.9 else min(5, max(1, truth + rng.choice((-1, 1))))
        else:
            asked[key] += 1
            rng = _rng("cheap", key, asked[key])
            score = truth if rng.random() < difficulty(key) else rng.choice(others)
        return json.dumps(json_for_schema(schema, score=score))

    return reply


def scoregate(root: Path, *args: str) -> tuple[str, str]:
    """Run the real CLI at 80 columns; return (the command as typed, what it printed)."""
    env = {**os.environ, "COLUMNS": "80", "MLFLOW_TRACKING_URI": f"sqlite:///{root / 'mlflow.db'}"}
    for key in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST"):
        env.pop(key, None)
    done = subprocess.run(
        [str(REPO / ".venv" / "bin" / "scoregate"), *args, "-C", str(root)], capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        raise SystemExit(f"scoregate {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return "scoregate " + " ".join(args), (done.stdout + done.stderr).replace(str(root), "<project>")


def cascade_lines(printed: str) -> list[str]:
    """The lines a run prints about its cascade judge (each with its continuation lines), then `...`."""
    out: list[str] = []
    taking = False
    for line in printed.splitlines():
        taking = line.startswith("cascade ") or (taking and line.startswith("  "))
        if taking:
            out.append(line)
    return out


def latest_run(root: Path, experiment: str) -> str:
    return sorted(p.name for p in (root / "runs").iterdir() if p.name.startswith(experiment))[-1]


def main() -> None:
    cal, new = items()
    human = {i["id"]: i["metadata"]["human"]["relevance"] for i in cal + new}
    server = ScriptedOpenAI()
    server.responder = responder(human)
    started = time.perf_counter()
    shown: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project(root, server, cal, new)
        scoregate(root, "run", "summeval_cal", "--no-mlflow", "--no-cache")
        cal_run = latest_run(root, "summeval_cal")
        shown.append(scoregate(root, "cascade", JUDGE, "--run", cal_run, "--human-key", "human_relevance", "--save"))
        command, printed = scoregate(root, "run", "summeval_new", "--no-mlflow", "--no-cache")
        shown.append((command, "\n".join(cascade_lines(printed))))
        new_run = latest_run(root, "summeval_new")
        kept = agreed = strong_agreed = escalated = 0
        for line in (root / "runs" / new_run / "results.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            score = next(s for s in row["scores"] if s["name"] == "relevance_score")
            ok = score["value"] is not None and abs(score["value"] - human[row["item_id"]]) <= 0.5
            if str(score.get("comment") or "").startswith("[kept"):
                kept, agreed = kept + 1, agreed + ok
            else:
                escalated, strong_agreed = escalated + 1, strong_agreed + ok
    server.close()
    record = {
        "bench": "cascade_summeval", "calibration_items": len(cal), "new_items": len(new),
        "kept": kept, "kept_agreement": agreed / kept if kept else None, "escalated": escalated,
        "escalated_agreement": strong_agreed / escalated if escalated else None,
        "target": TARGET, "delta": 0.1, "seconds": round(time.perf_counter() - started, 1),
    }  # fmt: skip
    out = HERE / "results"
    (out / "cascade_summeval.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    page = [f"```console\n$ {command}\n{printed.rstrip()}\n```\n" for command, printed in shown]
    page.append(
        f"On the {len(new)} new items the first judge kept {kept} ({kept / len(new):.1%}); "
        f"{agreed} of them agree with the human rating ({record['kept_agreement']:.3f}, target {TARGET}); "
        f"the {escalated} escalated items agree {record['escalated_agreement']:.3f} (the strong judge).\n"
    )
    (out / "cascade_summeval.md").write_text("\n".join(page), encoding="utf-8")
    print("\n".join(page))


if __name__ == "__main__":
    main()
