"""What a resumed run must show: each item stored exactly once and the task requests each item cost."""

from __future__ import annotations

import json
from pathlib import Path

from support.projects import DATASET_IDS, Runs
from support.scripted_openai import ScriptedOpenAI


def titles(project: Path) -> dict[str, str]:
    """Item id → episode title, to tell which item a recorded request was for."""
    lines = (project / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines()
    return {item["id"]: item["input"]["title"] for item in map(json.loads, lines)}


def task_requests_per_item(server: ScriptedOpenAI, project: Path) -> dict[str, int]:
    """Item id → how many task requests the scripted server received for it."""
    counts = dict.fromkeys(DATASET_IDS, 0)
    for item_id, title in titles(project).items():
        counts[item_id] = sum(title in r.text for r in server.task_requests())
    return counts


def stored_ids(runs: Runs, run_id: str) -> list[str]:
    """The item ids of the run's stored results, in store order."""
    return [r["item_id"] for r in runs.results(run_id)]


def assert_complete_exactly_once(runs: Runs, run_id: str) -> None:
    """The run finished with every item of the smoke dataset stored exactly once."""
    ids = stored_ids(runs, run_id)
    assert sorted(ids) == sorted(DATASET_IDS)  # every item, each exactly once
    assert runs.manifest(run_id)["status"] == "finished"
    assert runs.summary(run_id)["run_metrics"]["items"] == len(DATASET_IDS)
