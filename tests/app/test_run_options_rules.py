"""A run's options check themselves: a Python caller who builds contradictory `RunOptions` (or asks for a run with
contradictory flags) gets the usage error `scoregate run` prints, before any file is read or model called."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scoregate.app import RunOptions, check_run_flags
from scoregate.errors import ExitCode, ScoregateError, UsageError
from scoregate.store.shards import Shard

SHARD = Shard(0, 2)


Opt = RunOptions
STOP_ONLY = "--against, --max-items, --max-cost and --stop-batch belong to --stop-early"
RETRY_ONLY = "--retry-errors and --quarantine work on a stored run: add --resume RUN_ID"


@pytest.mark.parametrize(
    ("build", "message", "option"),
    [
        (
            lambda: Opt(sharding=Opt.ShardSpec(group="ci-7")),
            "--shards and --group belong to a sharded run: add --shard",
            None,
        ),
        (
            lambda: Opt(selection=Opt.Selection(run_id="x"), resume=Opt.ResumeFrom("y")),
            "--resume names the run to continue; drop --run-id",
            "--run-id",
        ),
        (
            lambda: Opt(sharding=Opt.ShardSpec(SHARD), resume=Opt.ResumeFrom("y")),
            "--shard resumes by itself (run the same index again); drop --resume",
            None,
        ),
        (lambda: Opt(resume=Opt.ResumeFrom(retry_errors=True)), RETRY_ONLY, None),
        (lambda: Opt(resume=Opt.ResumeFrom(quarantine=True)), RETRY_ONLY, None),
        (
            lambda: Opt(budget=Opt.BudgetLimit(usd=0.0)),
            "0: a budget must be more than 0 (0 allows no call)",
            "--budget-usd",
        ),
        (lambda: Opt(budget=Opt.BudgetLimit(minutes=-1.5)), "-1.5: a budget must be more than 0", "--budget-minutes"),
        (lambda: Opt(stop_early=Opt.StopEarly(against="ref")), STOP_ONLY, None),
        (lambda: Opt(stop_early=Opt.StopEarly(max_items=3)), STOP_ONLY, None),
        (lambda: Opt(stop_early=Opt.StopEarly(max_cost=0.5)), STOP_ONLY, None),
        (lambda: Opt(stop_early=Opt.StopEarly(batch=2)), STOP_ONLY, None),
        (
            lambda: Opt(mirrors=Opt.Mirrors(off=frozenset({"bogus"}))),
            "no sink 'bogus'; the sinks are: mlflow, langfuse",
            "--no-mirror",
        ),
    ],
)
def test_contradictory_options_are_a_usage_error(build: Callable[[], object], message: str, option: str | None) -> None:
    with pytest.raises(UsageError) as raised:
        build()
    assert raised.value.message.startswith(message)
    assert raised.value.option == option
    assert raised.value.exit_code == ExitCode.USAGE


def test_a_group_checks_itself_before_it_joins_the_options() -> None:
    with pytest.raises(UsageError, match="a budget must be more than 0"):
        Opt.BudgetLimit(usd=0.0)
    with pytest.raises(UsageError, match="belong to --stop-early"):
        Opt.StopEarly(against="ref")
    with pytest.raises(UsageError, match="belong to a sharded run"):
        Opt.ShardSpec(group="ci-7")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: Opt(stop_early=Opt.StopEarly(True, "ref"), resume=Opt.ResumeFrom("y")),
            "--stop-early starts a new run",
        ),
        (lambda: Opt(stop_early=Opt.StopEarly(True, "ref"), sharding=Opt.ShardSpec(SHARD)), "it cannot be sharded"),
    ],
)
def test_a_stop_early_run_refuses_resume_and_shard_when_built(build: Callable[[], object], message: str) -> None:
    with pytest.raises(ScoregateError, match=message) as raised:
        build()
    assert raised.value.hint is not None and raised.value.exit_code == ExitCode.ERROR


def test_options_that_agree_are_built() -> None:
    options = RunOptions(
        selection=RunOptions.Selection(run_id="r"),
        resume=RunOptions.ResumeFrom(retry_errors=True),
        budget=RunOptions.BudgetLimit(usd=0.5),
        sharding=RunOptions.ShardSpec(shard=SHARD, group="ci-7"),
    )
    assert options.sharding.shard == SHARD and options.resume.retry_errors
    stopping = RunOptions(stop_early=RunOptions.StopEarly(on=True, against="ref", max_items=20, batch=5))
    assert stopping.stop_early.against == "ref"
    assert RunOptions(resume=RunOptions.ResumeFrom(run_id="r", quarantine=True, retry_errors=True)).resume.quarantine


@pytest.mark.parametrize(
    ("flags", "message", "option"),
    [
        ({"shards": 3}, "--shards and --group belong to a sharded run: add --shard I/N or auto", None),
        ({"models": ["a", "b"], "run_id": "x"}, "--models starts one run per model, each with its own id", "--run-id"),
        ({"models": ["a"], "shard": "0/2"}, "--shard resumes by itself (run the same index again)", None),
        ({"no_langfuse": True, "prompt_source": "langfuse"}, "--no-langfuse runs without Langfuse", None),
        ({"dry_run": True, "resume": "y"}, "--dry-run forecasts one new run: drop --resume/--models", "--dry-run"),
        ({"dry_run": True, "models": ["a"]}, "--dry-run forecasts one new run: drop --resume/--models", "--dry-run"),
    ],
)
def test_contradictory_run_flags_are_a_usage_error(flags: dict[str, Any], message: str, option: str | None) -> None:
    with pytest.raises(UsageError) as raised:
        check_run_flags(**flags)
    assert raised.value.message.startswith(message)
    assert raised.value.option == option


def test_run_flags_that_agree_pass() -> None:
    check_run_flags(shard="auto", shards=4, models=None, run_id="r", dry_run=False)
    check_run_flags(models=["a", "b"], no_langfuse=True, prompt_source="auto")
    check_run_flags(dry_run=True, prompt_source="langfuse")
