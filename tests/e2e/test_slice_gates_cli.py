"""Slice gates as a user runs them: the `scoregate` executable, a scripted model, MLflow and the report."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from support.projects import SCOREGATE_BIN, Runs
from support.scripted_openai import ScriptedOpenAI, json_for_schema, markdown_summary, request_schema

FEEDS = {"devtools": 10, "data": 10, "security": 10, "cloud": 3}
BASELINE = {"devtools": [3, 4, 3, 3, 4], "data": [3, 4, 3, 3, 4], "security": [5, 5, 4, 5, 4], "cloud": [3]}
CANDIDATE = {"devtools": [5, 5, 4, 5, 5], "data": [5, 5, 4, 5, 5], "security": [3, 4, 3, 3, 3], "cloud": [5]}
"""Judge scores by feed and position: the candidate gains 1.4 on two feeds and 2 on cloud, loses 1.4 on security."""
MARK = re.compile(r"MARK-(\w+)-(\d+)")
GATE = "no_regression_by_feed"


def dataset_lines() -> str:
    """33 catch-up items; each transcript carries a mark the scripted judge reads (feed, position)."""
    lines = []
    for feed, n in FEEDS.items():
        for k in range(n):
            item = {
                "id": f"{feed}-{k:02d}",
                "input": {"title": f"{feed} episode {k}", "max_words_tldr": 60, "feed_category": feed,
                          "transcript": f"Host: this is the {feed} show, episode {k}. MARK-{feed}-{k} We talk shop."},
                "metadata": {"episode_kind": "interview" if k % 2 else "news"},
            }  # fmt: skip
            lines.append(json.dumps(item))
    return "\n".join(lines) + "\n"


def scores_by(table: dict[str, list[int]]) -> Callable[[dict[str, Any]], str]:
    """A responder: summaries as usual; the judge scores an item from `table` by the mark in its transcript."""

    def reply(body: dict[str, Any]) -> str:
        schema = request_schema(body)
        if schema is None:
            return markdown_summary(body)
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        found = MARK.search(text)
        assert found is not None, "a judge request without the item's mark"
        scores = table[found.group(1)]
        return json.dumps(json_for_schema(schema, score=scores[int(found.group(2)) % len(scores)]))

    return reply


@pytest.fixture
def sliced_project(project_dir: Path, edit_yaml: Callable[..., None]) -> Path:
    """The test project with a `feeds` dataset and an experiment gated per feed against production."""
    (project_dir / "datasets" / "feeds_v1.jsonl").write_text(dataset_lines(), encoding="utf-8")

    def change(config: dict[str, Any]) -> None:
        config["gates"].append({
            "name": GATE, "metric": "faithfulness_score", "stat": "paired_noninferiority", "compare_to": "production",
            "margin": 0.5, "op": ">=", "threshold": 0, "slices": ["feed_category", "episode_kind"],
            "min_slice_items": 5,
        })  # fmt: skip
        config["experiments"]["feeds"] = {
            "dataset": "feeds_v1", "prompt": "summarization-catchup", "evaluators": ["ev_faithfulness_v1"],
            "gates": [GATE],
        }  # fmt: skip

    edit_yaml(project_dir / "scoregate.yaml", change)
    return project_dir


def scoregate(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the real `scoregate` executable on the project."""
    return subprocess.run(
        [str(SCOREGATE_BIN), *args, "-C", str(project)], capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "160"},
    )  # fmt: skip


def cells(text: str) -> str:
    """Terminal output as one line of words: table borders dropped, whitespace collapsed."""
    return " ".join(re.sub(r"[│┃]", " ", text).split())


def promote_baseline(project: Path, runs: Runs) -> None:
    """Record the baseline's prompt version as holding `production` (what `scoregate promote` writes)."""
    version = runs.manifest()["receipts"]["prompts"]["summarization-catchup"]["version"]
    record = {"prompt": "summarization-catchup", "label": "production", "action": "promote", "version": version,
              "time": "2026-01-01T00:00:00+00:00"}  # fmt: skip
    (project / "promotions.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")


@pytest.mark.usefixtures("mlflow_store")
def test_one_feed_regressing_fails_the_gate_and_every_view_shows_the_slice_table(
    sliced_project: Path, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.responder = scores_by(BASELINE)
    first = scoregate(sliced_project, "run", "feeds", "--no-cache")
    assert "no baseline" in first.stdout + first.stderr  # no production run yet: INCOMPLETE, says why
    promote_baseline(sliced_project, runs)
    scripted_server.responder = scores_by(CANDIDATE)

    done = scoregate(sliced_project, "run", "feeds", "--no-cache", "--fail-on-gates")

    summary = runs.summary()
    gate = summary["gates"][0]
    assert done.returncode == 3 and summary["verdict"] == "fail", done.stdout + done.stderr
    rows = {f"{s['field']}={s['value']}": s for s in gate["slices"]}
    assert rows["feed_category=security"]["status"] == "fail"
    assert rows["feed_category=security"]["diff"] == pytest.approx(-1.4)
    assert rows["feed_category=cloud"]["status"] == "too_small"
    assert {rows[k]["status"] for k in ("feed_category=data", "feed_category=devtools")} == {"pass"}
    assert {rows[k]["status"] for k in ("episode_kind=news", "episode_kind=interview")} == {"pass"}
    assert "non-inferior within the margin 0.5" in gate["detail"]  # the whole run improves: only a slice fails
    output = cells(done.stdout)
    assert "slices of no_regression_by_feed" in output
    assert re.search(r"feed_category=security +10 +FAIL +worse +-1\.4", output)
    assert re.search(r"feed_category=cloud +3 +TOO SMALL", output)

    shown = cells(scoregate(sliced_project, "runs", "show", runs.latest()).stdout)
    assert re.search(r"feed_category=security +10 +FAIL +worse +-1\.4", shown)

    report = (runs.root / runs.latest() / "report.html").read_text(encoding="utf-8")
    assert '<section id="slices">' in report
    assert re.search(r"<td>feed_category</td><td>security</td><td>10</td><td class=\"bad\">FAIL</td>", report)
    # a paired gate judges the mean difference, not items one by one: no `items breaking 0` for it
    (row,) = re.findall(rf"<tr><td>{GATE}</td>.*?</tr>", report)
    cells_of_row = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells_of_row[5] == "—" and "not each item" in report.split('id="gates"')[1].split("</p>")[0]

    client = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])
    mirrored = client.get_run(json.loads((runs.root / runs.latest() / "links.json").read_text())["mlflow_run_id"])
    metrics = mirrored.data.metrics
    assert metrics[f"slice.{GATE}.feed_category.security.pass"] == 0.0
    assert metrics[f"slice.{GATE}.feed_category.security.diff"] == pytest.approx(-1.4)
    assert metrics[f"slice.{GATE}.feed_category.data.pass"] == 1.0
    assert metrics[f"slice.{GATE}.feed_category.cloud.n"] == 3.0


def test_a_slice_field_no_item_has_is_an_error_before_any_call(
    sliced_project: Path, scripted_server: ScriptedOpenAI, edit_yaml: Callable[..., None]
) -> None:
    def misspell(config: dict[str, Any]) -> None:
        config["gates"][-1]["slices"] = ["feed_categroy"]

    edit_yaml(sliced_project / "scoregate.yaml", misspell)

    done = scoregate(sliced_project, "run", "feeds")

    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 1, said
    assert "Traceback" not in said
    assert f"gates.{GATE}.slices: no item of" in said and "feeds_v1.jsonl has the field 'feed_categroy'" in said
    assert "input.feed_category" in said  # the fields the items do have
    assert "fix the gate's `slices:` in scoregate.yaml" in said
    assert scripted_server.requests == []


def test_a_misspelt_slice_field_suggests_the_closest_field_the_items_have(
    sliced_project: Path, scripted_server: ScriptedOpenAI, edit_yaml: Callable[..., None]
) -> None:
    def misspell(config: dict[str, Any]) -> None:
        config["gates"][-1]["slices"] = ["feed_categroy", "metadata.episode_knd"]

    edit_yaml(sliced_project / "scoregate.yaml", misspell)

    done = scoregate(sliced_project, "validate")

    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 1, said
    assert "has the field 'feed_categroy' in its input or metadata; did you mean `feed_category`?" in said
    assert "field 'metadata.episode_knd' in its input or metadata; did you mean `metadata.episode_kind`?" in said
    assert scripted_server.requests == []
