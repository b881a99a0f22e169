"""Flaky items: an item whose every_item verdict flips between runs is kept out of the gate, and said so everywhere."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.flaky_rule import EAGER
from support.projects import SCOREGATE_BIN, Runs
from support.scripted_openai import ScriptedOpenAI, markdown_summary


@pytest.fixture
def eager(project_dir: Path, edit_yaml: Callable[[Path, Callable[[Any], None]], None]) -> Path:
    """The test project on the EAGER rule."""
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config["settings"].update(flaky=EAGER))
    return project_dir


def scoregate(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the real `scoregate` executable on the project."""
    return subprocess.run(
        [str(SCOREGATE_BIN), *args, "-C", str(project)], capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "160"},
    )  # fmt: skip


def words(done: subprocess.CompletedProcess[str]) -> str:
    """stdout and stderr as one line of words (table borders dropped)."""
    return " ".join(re.sub(r"[│┃]", " ", done.stdout + done.stderr).split())


def long_tldr_every_other_call(title_mark: str) -> Any:
    """A responder whose summary of the item titled `title_mark` has a 120-word TL;DR on its 1st, 3rd... call."""
    calls = {"n": 0}

    def reply(body: dict[str, Any]) -> str:
        text = markdown_summary(body)
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if title_mark in prompt:
            calls["n"] += 1
            if calls["n"] % 2:
                text = text.replace("## TL;DR\n", "## TL;DR\n" + "word " * 120, 1)
        return text

    return reply


def test_a_flaky_item_is_kept_out_of_the_every_item_gate_and_listed_everywhere(
    eager: Path, project_dir: Path, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.responder = long_tldr_every_other_call("Open Models Weekly")

    done = scoregate(project_dir, "run", "counters", "--repeat", "3", "--fail-on-gates")

    said = words(done)
    summary = runs.summary()
    gate = next(g for g in summary["gates"] if g["name"] == "tldr_caps_met")
    assert [i["item_id"] for i in summary["flaky"]["items"]] == ["smoke-001"]
    assert gate["status"] == "pass" and gate["quarantined"] == ["smoke-001"]  # repeat 1 broke the cap
    assert "1 flaky item kept out: smoke-001 (`scoregate items flaky counters`)" in gate["detail"]
    assert done.returncode == 0, said
    assert (
        "flaky: 1 item verdict(s) flip between runs and repeats" in said
        and "smoke-001 (tldr_caps_met, 2/2 flips)" in said
    )

    shown = words(scoregate(project_dir, "runs", "show", runs.latest(), "--flaky"))
    assert "smoke-001 gate tldr_caps_met (tldr_within_cap) 2/2 flips (100%)" in shown
    assert f"{runs.latest()} fail (0)" in shown and f"{runs.latest()} repeat 2 pass (1)" in shown

    listed = scoregate(project_dir, "items", "flaky", "counters", "--json")
    assert listed.returncode == 0, words(listed)
    report = json.loads(listed.stdout)
    assert [(i["item_id"], i["flips"], i["comparisons"]) for i in report["items"]] == [("smoke-001", 2, 2)]
    assert report["runs"] == 1 and report["threshold"] == 0.2

    page = (runs.root / runs.latest() / "report.html").read_text(encoding="utf-8")
    assert '<section id="flaky">' in page and "<code>smoke-001</code>" in page


def test_a_gate_passed_with_a_quarantined_item_says_so_in_every_view(
    eager: Path, project_dir: Path, scripted_server: ScriptedOpenAI, runs: Runs, mlflow_store: str
) -> None:
    scripted_server.responder = long_tldr_every_other_call("Open Models Weekly")

    done = scoregate(project_dir, "run", "counters", "--repeat", "3", "--json")

    summary = runs.summary()
    gate = next(g for g in summary["gates"] if g["name"] == "tldr_caps_met")
    assert (gate["status"], gate["coverage"]) == ("pass", pytest.approx(5 / 6))  # the kept-out item is unmeasured
    assert (gate["gated_items"], gate["total_items"], gate["quarantined_breaking"]) == (5, 6, ["smoke-001"])
    assert "which breaks the rule in this run" in gate["detail"]
    printed = json.loads(done.stdout)
    (shown,) = [g for g in printed["summary"]["gates"] if g["name"] == "tldr_caps_met"]
    assert shown["quarantined"] == ["smoke-001"] and shown["gated_items"] == 5

    shown_run = scoregate(project_dir, "runs", "show", runs.latest())
    view = shown_run.stdout
    row = view[view.index("│ tldr_caps_met") :].splitlines()[:3]  # the status cell: PASS / on 5 of 6, / 1 quarantined
    assert [re.findall(r"PASS|on 5 of 6,|1 quarantined", line)[-1:] for line in row] == [
        ["PASS"],
        ["on 5 of 6,"],
        ["1 quarantined"],
    ], view
    table = words(shown_run)
    assert "verdict: PASS (tldr_caps_met: pass on 5 of 6, 1 quarantined)" in table
    assert "(tldr_caps_met: pass on 5 of 6, 1 quarantined)" in words(scoregate(project_dir, "runs", "list"))
    page = (runs.root / runs.latest() / "report.html").read_text(encoding="utf-8")
    assert "PASS on 5 of 6, 1 quarantined" in page
    assert "passed, with flaky items kept out: tldr_caps_met: pass on 5 of 6, 1 quarantined" in page
    from mlflow.tracking import MlflowClient

    run_id = json.loads((runs.root / runs.latest() / "links.json").read_text())["mlflow_run_id"]
    tags = MlflowClient(tracking_uri=mlflow_store).get_run(run_id).data.tags
    assert tags["gate.tldr_caps_met"] == "pass on 5 of 6, 1 quarantined"
    assert json.loads(tags["gate.tldr_caps_met.quarantine"]) == {"kept_out": 1, "breaking": 1, "gated": 5, "total": 6}
    assert "pass on 5 of 6, 1 quarantined" in tags["mlflow.note.content"]


def test_without_flips_nothing_is_kept_out_and_the_gate_still_fails(
    eager: Path, project_dir: Path, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    def always_long(body: dict[str, Any]) -> str:
        return markdown_summary(body).replace("## TL;DR\n", "## TL;DR\n" + "word " * 120, 1)

    scripted_server.responder = always_long

    done = scoregate(project_dir, "run", "counters", "--repeat", "2", "--fail-on-gates")

    summary = runs.summary()
    gate = next(g for g in summary["gates"] if g["name"] == "tldr_caps_met")
    assert done.returncode == 3 and gate["status"] == "fail" and gate["quarantined"] is None
    assert summary["flaky"]["items"] == []
    listed = words(scoregate(project_dir, "items", "flaky", "counters"))
    assert "no flaky items (flip rate above 20%, at least 3 observations; gates tldr_caps_met)" in listed


def test_items_flaky_of_an_unknown_experiment_is_a_clear_error(project_dir: Path) -> None:
    done = scoregate(project_dir, "items", "flaky", "counter")

    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "no experiment 'counter' under `experiments:`" in words(done) and "counters" in words(done)


def test_the_langfuse_gate_score_of_a_quarantined_pass_says_so_in_its_comment() -> None:
    from scoregate.sinks.langfuse.score_mapping import run_scores
    from scoregate.store.record import GateResult, RunSummary

    gate = GateResult(name="tldr_caps_met", metric="tldr_within_cap", stat="every_item", status="pass",
                      detail="0 of 9 measured items break >= 1; 1 flaky item kept out: a", quarantined=["a"],
                      quarantined_breaking=["a"], gated_items=9, total_items=10)  # fmt: skip
    summary = RunSummary(run_id="r", gates=[gate], verdict="pass")

    (post,) = [p for p in run_scores(summary, None) if p.name == "gate.tldr_caps_met"]

    assert post.value == "pass"  # the category stays one of pass / fail / incomplete
    assert post.comment == "pass on 9 of 10, 1 quarantined: 0 of 9 measured items break >= 1; 1 flaky item kept out: a"
    assert post.metadata is not None and post.metadata["quarantined"] == ["a"]
