"""Shards and Langfuse: every shard sends its items to the run's one experiment; the merge writes the run-level
scores once, on the Langfuse test double (the real SDK against tests/support/fake_langfuse)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.integrations.langfuse.mirror_state import experiment_id_for
from support.fake_langfuse import FakeLangfuse
from support.projects import DATASET_IDS, CliResult

RUN = "lf-7"
ROOT_SPAN = "experiment-item-run"


@pytest.fixture
def langfuse(fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch) -> FakeLangfuse:
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)
    return fake_langfuse


def _experiments(fake: FakeLangfuse) -> dict[str, set[str]]:
    return {key: set(row["itemIds"]) for key, row in fake.state.experiments().items()}


def test_shards_fill_one_experiment_and_the_merge_writes_its_run_scores_once(
    scoregate: Callable[..., CliResult], project_dir: Path, langfuse: FakeLangfuse
) -> None:
    for index in range(2):
        shard = scoregate(
            "run", "smoke", "--shard", f"{index}/2", "--run-id", RUN, "--no-mlflow", "--prompt-source", "local"
        )
        assert shard.code == 0, shard.output
        assert "langfuse: experiment" in shard.output
    experiment = experiment_id_for(RUN)
    assert list(_experiments(langfuse)) == [experiment]
    assert len(langfuse.state.find_spans(ROOT_SPAN)) == len(DATASET_IDS)
    assert [s for s in langfuse.state.scores if s.get("datasetRunId")] == []  # no shard writes run-level scores
    item_scores = len(langfuse.state.scores)
    assert item_scores > 0

    merged = scoregate("merge", RUN, "--no-mlflow")
    assert merged.code == 0, merged.output
    assert "langfuse failed" not in merged.output
    assert len(langfuse.state.find_spans(ROOT_SPAN)) == len(DATASET_IDS)  # no item sent twice
    run_level = [s for s in langfuse.state.scores if s.get("datasetRunId") == experiment]
    assert {s["name"] for s in run_level} >= {"verdict", "gate.sections_present"}
    assert len(langfuse.state.scores) == item_scores + len(run_level)
    assert [i for i, n in Counter(s["id"] for s in langfuse.state.scores).items() if n > 1] == []
    assert len(_experiments(langfuse)[experiment]) == len(DATASET_IDS)

    scores_before = len(langfuse.state.scores)
    again = scoregate("merge", RUN, "--no-mlflow")
    assert again.code == 0 and "nothing changed" in again.output
    assert len(langfuse.state.scores) == scores_before


def test_the_merge_sends_the_items_of_a_shard_that_ran_without_langfuse(
    scoregate: Callable[..., CliResult], project_dir: Path, langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (
        scoregate("run", "counters", "--shard", "0/2", "--run-id", RUN, "--no-mlflow", "--prompt-source", "local").code
        == 0
    )
    with monkeypatch.context() as off:
        off.delenv("LANGFUSE_PUBLIC_KEY")
        assert (
            scoregate(
                "run", "counters", "--shard", "1/2", "--run-id", RUN, "--no-mlflow", "--prompt-source", "local"
            ).code
            == 0
        )
    assert len(langfuse.state.find_spans(ROOT_SPAN)) == len(DATASET_IDS) // 2
    merged = scoregate("merge", RUN, "--no-mlflow")
    assert merged.code == 0, merged.output
    assert len(langfuse.state.find_spans(ROOT_SPAN)) == len(DATASET_IDS)
    assert list(_experiments(langfuse)) == [experiment_id_for(RUN)]
