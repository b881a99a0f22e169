"""`run --repeat K`: each item K times, cache bypassed for repeats 2..K, consistency metrics, retried repeats. A
killed repeated run resuming each repeat once is in tests/e2e/test_repeats_killed.py."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.consistency import consistency
from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.integrations.langfuse.delivery import trace_id_for
from scoregate.integrations.langfuse.mirror_state import trace_seed
from scoregate.store.records import ItemResult, Score
from support.fake_langfuse import FakeLangfuse
from support.langfuse_mirror import item_of, langfuse_off, langfuse_on, root_spans, score_ids, span_metadata
from support.langfuse_sync import sync_run
from support.projects import DATASET_IDS, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, markdown_summary
from support.stored_items import stored_keys

__all__ = ["langfuse_off", "langfuse_on"]  # fixtures shared with the Langfuse mirror tests


def test_each_item_runs_k_times_and_repeats_after_the_first_bypass_the_cache(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    assert scoregate("run", "counters", "--no-mlflow", "--limit", "2", "--repeat", "3").code == 0
    scripted_server.clear_requests()

    result = scoregate("run", "counters", "--no-mlflow", "--limit", "2", "--repeat", "3")

    assert result.code == 0, result.output
    run_id = runs.latest()
    assert sorted(stored_keys(runs, run_id)) == sorted(itertools.product(DATASET_IDS[:2], (1, 2, 3)))
    calls = {(r["item_id"], r["repeat"]): r["calls"][0] for r in runs.results(run_id)}
    assert all(calls[(i, 1)]["cached"] for i in DATASET_IDS[:2])  # repeat 1 reads the cache
    assert not any(calls[(i, r)]["cached"] for i in DATASET_IDS[:2] for r in (2, 3))
    assert len(scripted_server.task_requests()) == 4  # 2 items x repeats 2 and 3
    manifest = runs.manifest(run_id)
    assert manifest["options"]["repeat"] == 3
    assert "repeats 2..3 bypass it" in manifest["receipts"]["repeats"]["cache"]
    summary = runs.summary(run_id)
    assert summary["run_metrics"]["items"] == 2  # scores and gates are those of repeat 1
    section = summary["repeats"]
    assert (section["k"], section["items_complete"], section["exact_match_rate"]) == (3, 2, 1.0)
    assert section["scores"]["word_count"]["std_mean"] == 0.0
    assert section["scores"]["tldr_within_cap"]["pass_at_k"] == section["scores"]["tldr_within_cap"]["pass_hat_k"]
    assert "consistency over 3 repeats" in result.output and "pass@3" in result.output
    rows = json.loads((runs.root / run_id / "metrics.json").read_text())["rows"]
    assert [r["stage"] for r in rows[:1]] == ["model_check"]  # the run's one-token check, then the items' calls
    assert sorted((r["item_id"], r["repeat"]) for r in rows[1:]) == sorted(stored_keys(runs, run_id))


def test_outputs_that_differ_between_repeats_lower_agreement_and_raise_the_spread(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    counter = itertools.count()
    scripted_server.responder = lambda body: markdown_summary(body) + " more" * next(counter)

    assert scoregate("run", "counters", "--no-mlflow", "--limit", "3", "--repeat", "2").code == 0

    section = runs.summary()["repeats"]
    assert section["exact_match_rate"] == 0.0 and section["modal_agreement_mean"] == 0.5
    assert section["scores"]["word_count"]["std_mean"] > 0
    assert section["scores"]["word_count"]["items_measured"] == 3


def result(item: str, repeat: int, output: Any, **scores: Any) -> ItemResult:
    r = ItemResult(0, item, "p@1", {}, output, scores=[Score(k, v, "numeric", "ev") for k, v in scores.items()])
    r.repeat = repeat
    return r


def test_pass_at_k_and_pass_hat_k_on_constructed_repeats() -> None:
    records = [
        result("a", 1, "x", ok=1, n=2.0), result("a", 2, "x", ok=1, n=4.0), result("a", 3, "x", ok=1, n=6.0),
        result("b", 1, "x", ok=0, n=1.0), result("b", 2, "y", ok=1, n=1.0), result("b", 3, "x", ok=0, n=1.0),
        result("c", 1, "x", ok=0, n=1.0), result("c", 2, "x", ok=0, n=1.0), result("c", 3, "z", ok=None, n=1.0),
        result("d", 1, "x", ok=1, n=1.0),  # repeats 2 and 3 missing: not complete
    ]  # fmt: skip

    section = consistency(records, 3, [("ok", "numeric"), ("n", "numeric")])

    assert (section["items"], section["items_complete"]) == (4, 3)
    assert section["exact_match_rate"] == pytest.approx(1 / 3)
    assert section["modal_agreement_mean"] == pytest.approx((1 + 2 / 3 + 2 / 3) / 3)
    ok = section["scores"]["ok"]
    assert (ok["pass_at_k"], ok["pass_hat_k"], ok["items_all_repeats"]) == (1.0, 0.5, 2)  # c has a null
    assert section["scores"]["n"]["std_max"] == 2.0 and "pass_at_k" not in section["scores"]["n"]


def test_consistency_is_mirrored_to_mlflow(scoregate: Callable[..., CliResult], runs: Runs, mlflow_store: str) -> None:
    from mlflow.tracking import MlflowClient

    assert scoregate("run", "counters", "--limit", "2", "--repeat", "2").code == 0

    links = json.loads((runs.root / runs.latest() / "links.json").read_text())
    run = MlflowClient(tracking_uri=mlflow_store).get_run(links["mlflow_run_id"])
    assert run.data.metrics["repeat_exact_match_rate"] == 1.0
    assert run.data.metrics["repeat_k"] == 2.0
    assert "repeat_tldr_within_cap_pass_at_k" in run.data.metrics
    assert run.data.params["repeat"] == "2"


def test_repeat_must_be_positive(scoregate: Callable[..., CliResult], project_dir: Path) -> None:
    result = scoregate("run", "counters", "--repeat", "0")

    assert result.code == 2 and "--repeat" in result.output


def test_each_repeat_is_its_own_langfuse_trace_and_a_resync_sends_nothing_twice(
    project_dir: Path, fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None], langfuse_off: Callable[[], None]
) -> None:
    langfuse_off()
    store = run_experiment(
        project_dir,
        "counters",
        RunOptions(
            selection=RunOptions.Selection(limit=2, repeat=3), mirrors=RunOptions.Mirrors(off=frozenset({"mlflow"}))
        ),
    ).store
    langfuse_on()

    first = sync_run(project_dir, store.run_id)
    second = sync_run(project_dir, store.run_id)

    assert first.complete, first.lines()
    assert fake_langfuse.validation_failures == []
    roots = root_spans(fake_langfuse)
    assert len(roots) == 6 and len({s["traceId"] for s in roots}) == 6  # 2 items x 3 repeats, distinct traces
    placed = {(item_of(s), span_metadata(s, "langfuse.experiment.item.metadata").get("repeat", 1)) for s in roots}
    assert placed == set(itertools.product(DATASET_IDS[:2], (1, 2, 3)))
    repeat_one = next(s for s in roots if "repeat" not in span_metadata(s, "langfuse.experiment.item.metadata"))
    assert repeat_one["traceId"] == trace_id_for(trace_seed(store.run_id, item_of(repeat_one)))  # ids as before
    assert (second.items_sent, second.scores_sent) == (0, 0)
    assert len(set(score_ids(fake_langfuse))) == len(fake_langfuse.state.scores)


def test_retry_errors_reruns_a_failed_later_repeat_and_its_newer_record_wins(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.delay_next(0, times=3)  # repeat 1 of both items and repeat 2 of the first answer
    scripted_server.fail_next(400, body='{"error": {"message": "bad luck", "type": "invalid"}}')

    failed = scoregate("run", "counters", "--no-mlflow", "--no-cache", "--limit", "2", "--repeat", "2")

    run_id = runs.latest()
    second = DATASET_IDS[1]
    errors = [(r["item_id"], r["repeat"]) for r in runs.results(run_id) if r.get("error")]
    assert errors == [(second, 2)], failed.output
    assert "1 item(s) failed" in failed.output and "--retry-errors" in failed.output
    assert runs.summary(run_id)["repeats"]["failed_records"] == 1
    assert runs.summary(run_id)["run_metrics"]["error_count"] == 0  # repeat 1, the run's record, is whole
    scripted_server.clear_requests()

    retried = scoregate("run", "--resume", run_id, "--retry-errors", "--no-mlflow", "--no-cache")

    assert retried.code == 0, retried.output
    assert len(scripted_server.task_requests()) == 1  # only (second item, repeat 2) runs again
    records = stored_keys(runs, run_id)
    assert sorted(records) == sorted([*itertools.product(DATASET_IDS[:2], (1, 2)), (second, 2)])
    last = runs.results(run_id)[-1]
    assert (last["item_id"], last["repeat"], last.get("error")) == (second, 2, None)  # the newer record wins
    section = runs.summary(run_id)["repeats"]
    assert (section["failed_records"], section["items_complete"], section["exact_match_rate"]) == (0, 2, 1.0)
    assert "item(s) failed" not in retried.output


def test_a_retried_later_repeat_is_mirrored_again_to_langfuse_under_its_own_trace(
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    fake_langfuse: FakeLangfuse,
    langfuse_on: Callable[[], None],
    langfuse_off: Callable[[], None],
) -> None:
    langfuse_off()
    scripted_server.delay_next(0, times=3)
    scripted_server.fail_next(400)
    options = RunOptions(
        selection=RunOptions.Selection(limit=2, repeat=2),
        mirrors=RunOptions.Mirrors(off=frozenset({"mlflow"})),
        use_cache=False,
    )
    store = run_experiment(project_dir, "counters", options).store
    langfuse_on()
    assert sync_run(project_dir, store.run_id).complete
    langfuse_off()
    retry = RunOptions(
        resume=RunOptions.ResumeFrom(run_id=store.run_id, retry_errors=True),
        mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})),
    )
    run_experiment(project_dir, "counters", retry)
    langfuse_on()

    again = sync_run(project_dir, store.run_id)

    assert again.complete, again.lines()
    assert again.items_sent == 1  # only (second item, repeat 2): the other records were mirrored already
    second = DATASET_IDS[1]
    traces = [
        s["traceId"] for s in root_spans(fake_langfuse)
        if (item_of(s), span_metadata(s, "langfuse.experiment.item.metadata").get("repeat", 1)) == (second, 2)
    ]  # fmt: skip
    assert len(traces) == 2 and traces[0] == traces[1] == trace_id_for(trace_seed(store.run_id, f"{second}#repeat-2"))
