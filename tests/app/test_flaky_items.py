"""Flaky items: an item whose every_item verdict flips between runs is kept out of the gate, and said so everywhere."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.flaky import FlipCounter, GateRule, Observation, flaky_items, flips
from scoregate.app.run.flaky_items import find_flaky
from scoregate.catalog.config_models import ProjectConfig
from scoregate.store.records import ItemResult, Score
from scoregate.store.run_store import RunStore
from support.compare_runs import manifest
from support.projects import SCOREGATE_BIN, Runs
from support.scripted_openai import ScriptedOpenAI, markdown_summary

RULE = GateRule("hallucinations", "hallucination_count", "<=", 1)


def obs(*values: float, conditions: str = "c") -> list[Observation]:
    """Observations of one item in runs r0, r1, ... under the same conditions."""
    return [Observation(f"r{i}", 1, conditions, v) for i, v in enumerate(values)]


def test_a_flip_is_counted_only_between_observations_under_the_same_conditions() -> None:
    assert flips(obs(0, 3, 0, 3), RULE) == (3, 3)
    assert flips(obs(0, 0, 0), RULE) == (0, 2)
    fixed = [*obs(3, 3, conditions="old prompt"), *obs(0, 0, conditions="new prompt")]  # a fix, not chance
    assert flips(fixed, RULE) == (0, 2)


def test_an_item_is_flaky_above_the_threshold_with_enough_observations() -> None:
    histories = [(RULE, "a", obs(0, 3, 0)), (RULE, "b", obs(0, 3)), (RULE, "c", obs(0, 0, 0, 0, 0, 3))]

    found = flaky_items(histories, threshold=0.2, min_observations=3)

    assert [(f.item_id, f.flips, f.comparisons) for f in found] == [("a", 2, 2)]  # b: 2 observations; c: 1/5 = 0.2
    assert [h["verdict"] for h in found[0].history] == ["pass", "fail", "pass"]
    assert found[0].flip_rate == 1.0


def test_the_streaming_counter_finds_the_items_the_rule_finds() -> None:
    rng = random.Random(3)
    histories = []
    for k in range(300):
        observations = [
            Observation(f"r{i}", 1, rng.choice("ab"), rng.choice([0, 0, 0, 2])) for i in range(rng.randint(1, 8))
        ]
        histories.append((RULE, f"item-{k}", observations))
    counter = FlipCounter()
    for rule, item_id, observations in histories:
        for o in observations:
            counter.add(rule, item_id, o)

    expected = {(f.gate, f.item_id) for f in flaky_items(histories, threshold=0.2, min_observations=3)}

    assert counter.flaky(threshold=0.2, min_observations=3) == expected
    assert 20 < len(expected) < 280  # the sample holds both kinds


EAGER = {"threshold": 0.2, "min_observations": 3}
"""The rule before bench/flaky_defaults.py chose the defaults: one flip in three observations marks an item. These
tests check what a flaky item changes, on histories short enough to read."""


def config(**flaky: Any) -> ProjectConfig:
    """A project with experiment `hard` gated by `hallucinations` (every_item, <= 1), on the EAGER rule."""
    return ProjectConfig.model_validate({
        "settings": {"flaky": {**EAGER, **flaky}},
        "experiments": {"hard": {"dataset": "hardcases", "prompt": "p", "gates": ["hallucinations"]}},
        "gates": [{"name": "hallucinations", "metric": "hallucination_count", "op": "<=", "threshold": 1,
                   "stat": "every_item"}],
    })  # fmt: skip


def store_run(runs_dir: Path, run_id: str, day: int, values: dict[str, list[float]], version: str = "1") -> RunStore:
    """A run of experiment `hard` whose item id has one value per repeat."""
    prompts = {"p": {"version": version, "labels": [], "temperature": None, "max_tokens": None}}
    m = manifest(run_id, experiment="hard", prompts=prompts, started_at=f"2026-01-{day:02d}T00:00:00+00:00")
    store = RunStore.create(runs_dir, run_id, m)
    for index, (item_id, repeats) in enumerate(values.items()):
        for repeat, value in enumerate(repeats, start=1):
            result = ItemResult(index=index, item_id=item_id, prompt="p@1", input={"q": item_id}, output="x",
                                repeat=repeat)  # fmt: skip
            result.scores.append(Score("hallucination_count", value, "numeric", "ev"))
            store.append(result)
    store.close()
    return store


def test_the_history_spans_the_experiments_runs_and_their_repeats(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    store_run(runs_dir, "hard-1", 1, {"steady": [0], "wobbly": [0], "fixed": [3]})
    store_run(runs_dir, "hard-2", 2, {"steady": [0], "wobbly": [3], "fixed": [0]}, version="2")  # a new prompt
    current = store_run(runs_dir, "hard-3", 3, {"steady": [0, 0], "wobbly": [0, 2], "fixed": [0, 0]}, version="2")

    report = find_flaky(config(), runs_dir, "hard", current=current)

    assert report.run_ids == ["hard-1", "hard-2", "hard-3"]
    assert [(i.item_id, i.gate) for i in report.items] == [("wobbly", "hallucinations")]
    history = report.items[0].history
    assert [(h["run_id"], h["repeat"], h["verdict"]) for h in history] == [
        ("hard-1", 1, "pass"), ("hard-2", 1, "fail"), ("hard-3", 1, "pass"), ("hard-3", 2, "fail"),
    ]  # fmt: skip
    assert (report.items[0].flips, report.items[0].comparisons) == (2, 2)  # hard-1 ran another prompt version
    assert report.kept_out("hallucinations") == {"wobbly"}
    newest = find_flaky(config(window_runs=1), runs_dir, "hard", current=current)
    assert newest.run_ids == ["hard-3"] and newest.items == []  # its 2 repeats are too few observations
    assert find_flaky(config(min_observations=5), runs_dir, "hard", current=current).items == []


# ------------------------------------------------------------ as a user runs it


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


@pytest.mark.parametrize("bad", [{"threshold": 1.5}, {"min_observations": 1}, {"window_runs": 0}])
def test_bad_flaky_settings_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="flaky"):
        config(**bad)


def test_by_default_one_flip_in_a_few_observations_quarantines_nothing(tmp_path: Path) -> None:
    """Three runs in which a stochastic judge flipped every item (the reviewer's 5-of-9 case, worse): no item has
    the 8 observations the defaults ask for, so every item stays in the gate."""
    runs_dir = tmp_path / "runs"
    ids = [f"item-{k}" for k in range(9)]
    for day in (1, 2, 3):
        current = store_run(runs_dir, f"hard-{day}", day, {i: [[0.0, 3.0][(k + day) % 2]] for k, i in enumerate(ids)})
    defaults = config().model_copy(update={"settings": ProjectConfig().settings})

    report = find_flaky(defaults, runs_dir, "hard", current=current)

    assert (report.threshold, report.min_observations) == (0.35, 8)
    assert report.items == [] and report.runs == 3
    assert len(find_flaky(config(), runs_dir, "hard", current=current).items) == 9  # the old rule: all nine


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
