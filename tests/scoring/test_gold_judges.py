"""`output_from: expected_output`: judges score the gold summaries, so calibrate can use gold_v1's ratings."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.projects import REPO, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI


def add_gold_judges(project_dir: Path, edit_yaml: Callable[..., None]) -> None:
    for suffix in (".jsonl", ".yaml"):
        shutil.copy(REPO / "datasets" / f"gold_v1{suffix}", project_dir / "datasets" / f"gold_v1{suffix}")

    def change(config: dict[str, Any]) -> None:
        smoke = config["experiments"]["smoke"]
        config["experiments"]["gold_judges"] = {
            "dataset": "gold_v1",
            "prompt": smoke["prompt"],
            "output_from": "expected_output",
            "evaluators": ["ev_actionability_v1", "ev_faithfulness_v1", "ev_conciseness_v1"],
        }

    edit_yaml(project_dir / "scoregate.yaml", change)


def test_the_references_are_judged_without_a_model_call_and_calibrate_pairs_them(
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: Callable[..., None],
    runs: Runs,
) -> None:
    add_gold_judges(project_dir, edit_yaml)

    result = scoregate("run", "gold_judges", "--no-mlflow")

    assert result.code == 0, result.output
    assert scripted_server.task_requests() == []
    assert len(scripted_server.judge_requests()) == 6 * 3
    gold = {json.loads(line)["id"]: json.loads(line) for line in (REPO / "datasets" / "gold_v1.jsonl").open()}
    stored = runs.results()
    assert {r["item_id"]: r["output"] for r in stored} == {k: v["expected_output"] for k, v in gold.items()}
    assert all(r["prompt"] == "expected_output" and r["calls"][0]["purpose"].startswith("judge:") for r in stored)
    assert runs.manifest()["receipts"]["output_from"] == "expected_output"

    calibration = scoregate(
        "calibrate", "--run", runs.latest(), "--judge-key", "actionability_score",
        "--human-key", "human_actionability", "--json",
    )  # fmt: skip
    assert calibration.code == 0, calibration.output
    report = json.loads(calibration.out)
    assert (report["n_pairs"], report["excluded"]) == (len(gold), {})
    assert report["pooled"]["spearman"]["reason"] == "judge scores are constant: correlation is undefined"
