"""Runs are labelled by what differs between them (model, prompt versions, dataset, experiment, judge), with the run
id only where the set-ups are the same: in `rank`, and in the report of two or more runs."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

from scoregate.store.run_labels import run_labels
from support.projects import CliResult, Runs


def run(run_id: str, model: str = "local", catchup: str = "1", howto: str = "1", **more: str) -> dict[str, object]:
    prompts = {"summarization-catchup": catchup, "summarization-howto": howto}
    return {"run_id": run_id, "model": model, "prompts": prompts, "dataset": "smoke_v1", "experiment": "smoke", **more}


def test_runs_of_two_prompt_versions_are_labelled_by_the_prompt_that_differs() -> None:
    assert run_labels([run("r1", catchup="3"), run("r2", catchup="4")]) == [
        "summarization-catchup@3",
        "summarization-catchup@4",
    ]


def test_each_differing_aspect_is_named_and_the_same_ones_are_left_out() -> None:
    assert run_labels([run("r1", model="local"), run("r2", model="gpt-4o-mini")]) == ["local", "gpt-4o-mini"]
    assert run_labels([run("r1", "local", "3"), run("r2", "gpt-4o-mini", "4")]) == [
        "local · summarization-catchup@3",
        "gpt-4o-mini · summarization-catchup@4",
    ]
    assert run_labels([run("r1"), run("r2", experiment="hardcases", dataset="hardcases")]) == [
        "smoke_v1 · experiment smoke",
        "hardcases · experiment hardcases",
    ]
    assert run_labels([run("r1", judge_model="local"), run("r2", judge_model="claude-haiku")]) == [
        "judge local",
        "judge claude-haiku",
    ]


def test_runs_of_one_set_up_are_told_apart_by_run_id_and_only_those() -> None:
    assert run_labels([run("r1"), run("r2")]) == ["local (r1)", "local (r2)"]
    assert run_labels([run("r1", catchup="3"), run("r2", catchup="3"), run("r3", catchup="4")]) == [
        "summarization-catchup@3 (r1)",
        "summarization-catchup@3 (r2)",
        "summarization-catchup@4",
    ]


def two_prompt_versions(scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs) -> tuple[str, str]:
    """Run `counters` twice on the scripted model, the catch-up prompt edited in between; return the run ids."""
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    first = runs.latest()
    path = project_dir / "prompts" / "summarization-catchup.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("Write", "Please write", 1), encoding="utf-8")
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    return first, runs.latest()


def test_rank_and_the_report_of_two_prompt_versions_name_the_versions_not_the_model(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, tmp_path: Path
) -> None:
    a, b = two_prompt_versions(scoregate, project_dir, runs)
    version_a = runs.summary(a)["prompts"]["summarization-catchup"]
    version_b = runs.summary(b)["prompts"]["summarization-catchup"]
    assert version_a != version_b
    assert runs.summary(a)["prompts"]["summarization-howto"] == runs.summary(b)["prompts"]["summarization-howto"]

    ranked = scoregate("rank", a, b)

    assert ranked.code == 0, ranked.output
    assert f"summarization-catchup@{version_a}" in ranked.output
    assert f"summarization-catchup@{version_b}" in ranked.output
    assert "scripted@" not in ranked.output and "summarization-howto@" not in ranked.output

    out = tmp_path / "pair.html"
    assert scoregate("report", a, b, "-o", str(out)).code == 0
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", out.read_text(encoding="utf-8"))).split())
    assert f"2 runs: summarization-catchup@{version_a} vs summarization-catchup@{version_b}" in text
    assert f"A: summarization-catchup@{version_a}" in text and f"B: summarization-catchup@{version_b}" in text
    assert "scripted vs scripted" not in text and "A: scripted " not in text
