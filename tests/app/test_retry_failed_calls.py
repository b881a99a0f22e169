"""`run --resume RUN --retry-errors` redoes the items whose task succeeded but whose judge could not be reached
(the newest record wins, the old one stays as history), and a run says how many scores are null because a call
failed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from support.projects import DATASET_IDS, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Edit = Callable[[Path, Callable[[Any], None]], None]
JUDGE_KEYS = ("faithfulness_score", "actionability_score", "conciseness_score")


@pytest.fixture
def judge_server() -> Iterator[ScriptedOpenAI]:
    server = ScriptedOpenAI()
    try:
        yield server
    finally:
        server.close()


def test_retry_errors_redoes_judge_calls_that_could_not_connect(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    runs: Runs,
    scripted_server: ScriptedOpenAI,
    judge_server: ScriptedOpenAI,
    edit_yaml: Edit,
) -> None:
    def judge_elsewhere(config: Any) -> None:
        config["models"]["judge"] = dict(config["models"]["scripted"], base_url=judge_server.url, max_retries=0)
        config["settings"].update(judge_model="judge", max_consecutive_failures=0)

    edit_yaml(project_dir / "scoregate.yaml", judge_elsewhere)
    task_reply = scripted_server.responder

    def judge_goes_down_with_the_first_item(body: dict[str, Any]) -> str:
        judge_server.down()  # after the one-token checks passed: the judge endpoint is gone mid-run
        return task_reply(body)

    scripted_server.responder = judge_goes_down_with_the_first_item

    first = scoregate("run", "smoke", "--no-mlflow", "--no-cache")

    assert first.code == 0, first.output
    run_id = runs.latest()
    stored = runs.results(run_id)
    assert all(r["error"] is None for r in stored)  # every task call succeeded
    judged = [s for r in stored for s in r["scores"] if s["name"] in JUDGE_KEYS]
    assert judged and all(s["value"] is None and "judge call failed" in s["reason"] for s in judged)
    nulls = sum(s["value"] is None for r in stored for s in r["scores"])
    assert (
        f"{nulls} scores null in {len(DATASET_IDS)} items where a judge or stage call failed — "
        f"redo them with `scoregate run --resume {run_id} --retry-errors`"
    ) in first.output
    judge_server.up()
    scripted_server.responder = task_reply

    retried = scoregate("run", "--resume", run_id, "--retry-errors", "--no-mlflow", "--no-cache")

    assert retried.code == 0, retried.output
    assert "nothing to retry" not in retried.output
    lines = runs.results(run_id)
    assert len(lines) == 2 * len(DATASET_IDS)  # the records with null judge scores stay as history
    newest = {r["item_id"]: r for r in lines}
    assert all(s["value"] is not None for r in newest.values() for s in r["scores"] if s["name"] in JUDGE_KEYS)
    summary = runs.summary(run_id)
    assert summary["scores"]["faithfulness_score"]["n_measured"] == len(DATASET_IDS)
    assert summary["run_metrics"]["items_with_failed_calls"] == 0
    assert "where a judge or stage call failed" not in retried.output
    again = scoregate("run", "--resume", run_id, "--retry-errors", "--no-mlflow", "--no-cache")
    assert "no item failed; nothing to retry" in again.output
