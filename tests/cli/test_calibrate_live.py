"""`scoregate calibrate --live`: the live judges' scores (feedback/live_judges.jsonl) against the human ratings,
one deployed evaluator version per figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from support.gold_run import Cli, gold_items, gold_run  # noqa: F401
from support.projects import CliResult

BLUE, GREEN = "ver-blue-0001", "ver-green-0002"
LIVE = {"gold-001": 2, "gold-002": 5, "gold-003": 3, "gold-004": 4, "gold-005": 1, "gold-006": 5}
"""What the live (blue) judge scored each gold summary: not what the run's own judge said."""


def write_live_scores(project_dir: Path, run_id: str, rows: list[tuple[str, str, float]]) -> None:
    lines = [
        {
            "score_id": f"{version}-{item}",
            "key": "actionability_score",
            "value": value,
            "run_id": run_id,
            "item_id": item,
            "evaluator_id": "evaluator-" + version,
            "evaluator_version_id": version,
        }
        for item, version, value in rows
    ]
    path = project_dir / "feedback" / "live_judges.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def calibrate(scoregate: Cli, run_id: str, *extra: str) -> CliResult:
    keys = ("--judge-key", "actionability_score", "--human-key", "human_actionability")
    return scoregate("calibrate", "--run", run_id, *keys, "--live", *extra)


def as_json(result: CliResult) -> dict[str, Any]:
    assert result.code == 0, result.output
    return dict(json.loads(result.out))


def test_live_scores_are_calibrated_and_the_figure_names_its_evaluator_version(
    scoregate: Cli,
    gold_run: str,  # noqa: F811
    project_dir: Path,
) -> None:
    write_live_scores(project_dir, gold_run, [(item, BLUE, value) for item, value in LIVE.items()])

    data = as_json(calibrate(scoregate, gold_run, "--json"))
    shown = calibrate(scoregate, gold_run)

    items = gold_items()
    human = [item["metadata"]["human"]["actionability"] for item in items]
    judge = [LIVE[item["id"]] for item in items]
    assert data["n_pairs"] == 6 and data["evaluator_version"] == BLUE
    assert data["pooled"]["spearman"]["value"] == np.float64(stats.spearmanr(judge, human).statistic)
    assert f"live evaluator version {BLUE}" in " ".join(shown.output.split())


def test_live_scores_of_two_versions_are_never_mixed_in_one_figure(
    scoregate: Cli,
    gold_run: str,  # noqa: F811
    project_dir: Path,
) -> None:
    rows = [(item, BLUE, value) for item, value in LIVE.items()]
    rows += [("gold-001", GREEN, 4), ("gold-002", GREEN, 4)]
    write_live_scores(project_dir, gold_run, rows)

    mixed = calibrate(scoregate, gold_run)
    green = as_json(calibrate(scoregate, gold_run, "--evaluator-version", GREEN, "--json"))
    unknown = calibrate(scoregate, gold_run, "--evaluator-version", "nope")
    saved = calibrate(scoregate, gold_run, "--save")

    flat = " ".join(mixed.output.split())
    assert mixed.code != 0 and "Traceback" not in mixed.output
    assert f"from 2 evaluator versions ({BLUE}: 6 items, {GREEN}: 2 items)" in flat
    assert "--evaluator-version" in flat
    assert green["evaluator_version"] == GREEN and green["n_pairs"] == 2
    assert unknown.code != 0 and "no live score of evaluator version 'nope'" in " ".join(unknown.output.split())
    assert saved.code != 0 and "--save" in saved.output
