"""The HTML report shows the live judges' scores of a run (kept by `scores pull`) split by the deployed evaluator
version that wrote them: never one figure over two versions."""

from __future__ import annotations

import json
import re
from pathlib import Path

from scoregate.report import build_report
from scoregate.report.page import render_page
from support.compare_runs import write_run

BLUE, GREEN = "ver-blue-0001", "ver-green-0002"


def write_live(root: Path, rows: list[tuple[str, str, str, float]]) -> None:
    path = root / "feedback" / "live_judges.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        {"score_id": f"{run}-{version}-{item}", "key": "actionability_score", "value": value, "run_id": run,
         "item_id": item, "evaluator_id": "evaluator-1", "evaluator_version_id": version}
        for run, item, version, value in rows
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_the_report_splits_the_live_scores_by_evaluator_version(tmp_path: Path) -> None:
    store = write_run(tmp_path / "runs", "r1", {"a": {"q": 1}, "b": {"q": 2}, "c": {"q": 3}})
    write_live(
        tmp_path,
        [("r1", "a", BLUE, 2), ("r1", "b", BLUE, 4), ("r1", "c", BLUE, 3), ("r1", "a", GREEN, 5),
         ("other", "a", BLUE, 1)],
    )  # fmt: skip

    report = build_report([store])
    page = text_of(render_page(report))

    (run,) = report["runs"]
    rows = {(r["key"], r["evaluator_version_id"]): r for r in run["live_judges"]}
    assert set(rows) == {("actionability_score", BLUE), ("actionability_score", GREEN)}
    assert (rows["actionability_score", BLUE]["n"], rows["actionability_score", BLUE]["mean"]) == (3, 3.0)
    assert (rows["actionability_score", GREEN]["n"], rows["actionability_score", GREEN]["mean"]) == (1, 5.0)
    assert "Live judges" in page
    assert f"actionability_score {BLUE} evaluator-1 3 3.00" in page
    assert f"actionability_score {GREEN} evaluator-1 1 5.00" in page


def test_a_run_no_live_judge_scored_has_no_live_section(tmp_path: Path) -> None:
    store = write_run(tmp_path / "runs", "r1", {"a": {"q": 1}})

    report = build_report([store])

    assert report["runs"][0]["live_judges"] == [] and "Live judges" not in text_of(render_page(report))
