"""Flaky items: which items the rule finds, from which history, under which settings. What a flaky item changes
in a gate and in every view, through the real executable, is in tests/e2e/test_flaky_items_processes.py."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.flaky import FlipCounter, GateRule, Observation, flaky_items, flips
from scoregate.app.run.flaky_items import find_flaky
from scoregate.catalog.config_models import ProjectConfig
from scoregate.store.records import ItemResult, Score
from scoregate.store.run_store import RunStore
from support.compare_runs import manifest
from support.flaky_rule import EAGER

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
