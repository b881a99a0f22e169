"""Real runs for the report tests: a summarization project, an extraction project with three models.

Every run goes through `run_experiment` against the scripted OpenAI-compatible server, so the runs (and the
report each one writes at its end) are exactly what a user gets; only the model's replies are scripted.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from scoregate.app.run.experiment import RunOptions, RunOutcome, run_experiment
from support.projects import DATASET_IDS, REPO, copy_shipped, project_config, write_yaml
from support.scripted_openai import ScriptedOpenAI, json_for_schema, markdown_summary, request_schema

MODELS = {"small": (0.0, 0.05), "medium": (0.01, 0.4), "large": (0.03, 2.0)}
"""Extraction models: name → (seconds each reply waits, USD per million tokens in and out)."""
OPTIONS = RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})), use_cache=False)


def summarization_project(root: Path, server: ScriptedOpenAI) -> Path:
    """Write the six-item smoke project (shipped prompts, evaluators and gates) served by `server`."""
    shutil.copytree(REPO / "prompts", root / "prompts")
    shutil.copytree(REPO / "evaluators", root / "evaluators")
    (root / "datasets").mkdir()
    shutil.copy(REPO / "datasets" / "smoke_v1.yaml", root / "datasets" / "smoke_v1.yaml")
    lines = (REPO / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if any(f'"id": "{item_id}"' in line for item_id in DATASET_IDS)]
    (root / "datasets" / "smoke_v1.jsonl").write_text("".join(kept), encoding="utf-8")
    write_yaml(root / "scoregate.yaml", project_config(server.url))
    return root


def shorter_summaries(body: dict[str, Any]) -> str:
    """A candidate model's replies: judges as scripted, summaries without their references section."""
    schema = request_schema(body)
    if schema is not None:
        return json.dumps(json_for_schema(schema, score=3))
    return markdown_summary(body).split("## References", 1)[0] + "Thanks for listening."


def summarization_runs(root: Path, server: ScriptedOpenAI) -> tuple[RunOutcome, RunOutcome]:
    """Run the smoke experiment twice: the scripted baseline (A), then a candidate with other replies (B)."""
    project = summarization_project(root, server)
    first = run_experiment(project, "smoke", OPTIONS)
    server.responder = shorter_summaries
    try:
        second = run_experiment(project, "smoke", OPTIONS)
    finally:
        server.responder = server.default_reply
    return first, second


def extraction_project(root: Path, server: ScriptedOpenAI) -> Path:
    """Write the shipped extraction project with three priced models on `server` that differ in care and speed."""
    copy_shipped(
        root,
        {
            "datasets": ["extraction_v1.jsonl", "extraction_v1.yaml"],
            "prompts": ["extraction.yaml"],
            "evaluators": ["extraction_v1.yaml"],
        },
    )
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))
    models = {
        name: {"provider": "openai", "model": name, "base_url": server.url,
               "input_cost_per_mtok": price, "output_cost_per_mtok": price * 4}
        for name, (_, price) in MODELS.items()
    }  # fmt: skip
    config = {
        "project": "extraction-report",
        "settings": {"model": "large", "concurrency": 4, "bootstrap_resamples": 200},
        "models": models,
        "gates": [g for g in shipped["gates"] if g["name"].startswith("extraction_")],
        "experiments": {"extraction": shipped["experiments"]["extraction"]},
    }
    write_yaml(root / "scoregate.yaml", config)
    references: dict[str, Any] = {}
    for line in (root / "datasets" / "extraction_v1.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        references[item["input"]["text"]] = item

    def reply(body: dict[str, Any]) -> str:
        user = body["messages"][-1]["content"]
        text = user.split("Text:\n", 1)[1].split("\n\nExtract information", 1)[0]
        item = references[text]
        expected = json.loads(json.dumps(item["expected_output"]))
        model = str(body.get("model"))
        time.sleep(MODELS[model][0])
        position = sorted(references).index(text)
        if model == "small" and position % 4 == 0 and isinstance(expected, dict) and expected:
            expected.pop(sorted(expected)[0])  # leaves a field out
        if model != "large" and position % 7 == 0 and isinstance(expected, dict):
            expected["note"] = "invented by the model"  # a fabricated field
        if model == "small" and position % 11 == 0:
            return '{"cut": '  # not JSON
        return json.dumps(expected)

    server.responder = reply
    return root


def extraction_runs(root: Path, server: ScriptedOpenAI) -> list[RunOutcome]:
    """Run the extraction experiment once per model, on the same items."""
    project = extraction_project(root, server)
    return [
        run_experiment(project, "extraction", replace(OPTIONS, models=RunOptions.Models(model=name))) for name in MODELS
    ]
