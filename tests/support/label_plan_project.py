"""The smoke project for label planning: three items judged pass (5), three judged fail (2), and human ratings
imported for two of each (tests/cli/test_plan_labels_cmd.py, tests/e2e/test_annotate_label_plan.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from support.calibration_replies import script_replies, smoke_titles
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

HUMAN = {0: 5, 1: 3, 3: 2, 4: 4}
"""Index of a smoke item (sorted by id) → its imported human_actionability."""


def label_plan_run(
    project_dir: Path, server: ScriptedOpenAI, scoregate: Callable[..., CliResult], runs: Runs, *run_args: str
) -> list[str]:
    """Run smoke with the first three items judged 5 and the others 2, import 4 human ratings; return the item ids."""
    titles = smoke_titles(project_dir)
    ids = sorted(titles)
    script_replies(server, {}, {titles[item]: 5 if n < 3 else 2 for n, item in enumerate(ids)})
    ran = scoregate("run", "smoke", "--no-mlflow", "--no-cache", *run_args)
    assert ran.code == 0, ran.output
    lines = ["run_id,item_id,key,value"] + [
        f"{runs.latest()},{ids[n]},human_actionability,{v}" for n, v in HUMAN.items()
    ]
    ratings = project_dir / "ratings.csv"
    ratings.write_text("\n".join(lines) + "\n", encoding="utf-8")
    imported = scoregate("scores", "import", str(ratings), "--local-only")
    assert imported.code == 0, imported.output
    return ids
