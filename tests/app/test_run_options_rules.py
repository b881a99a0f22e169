"""A run's options check themselves: a Python caller who builds contradictory `RunOptions` (or asks for a run with
contradictory flags) gets the usage error `scoregate run` prints, before any file is read or model called."""

from __future__ import annotations

from typing import Any

import pytest

from scoregate.app import RunOptions, check_run_flags
from scoregate.errors import ExitCode, ScoregateError, UsageError
from scoregate.store.shards import Shard

SHARD = Shard(0, 2)


@pytest.mark.parametrize(
    ("fields", "message", "option"),
    [
        ({"group": "ci-7"}, "--shards and --group belong to a sharded run: add --shard I/N or auto", None),
        ({"run_id": "x", "resume": "y"}, "--resume names the run to continue; drop --run-id", "--run-id"),
        ({"shard": SHARD, "resume": "y"}, "--shard resumes by itself (run the same index again); drop --resume", None),
        ({"retry_errors": True}, "--retry-errors and --quarantine work on a stored run: add --resume RUN_ID", None),
        ({"quarantine": True}, "--retry-errors and --quarantine work on a stored run: add --resume RUN_ID", None),
        ({"budget_usd": 0.0}, "0: a budget must be more than 0 (0 allows no call)", "--budget-usd"),
        ({"budget_minutes": -1.5}, "-1.5: a budget must be more than 0 (0 allows no call)", "--budget-minutes"),
        ({"against": "ref"}, "--against, --max-items, --max-cost and --stop-batch belong to --stop-early", None),
        ({"max_items": 3}, "--against, --max-items, --max-cost and --stop-batch belong to --stop-early", None),
        ({"max_cost": 0.5}, "--against, --max-items, --max-cost and --stop-batch belong to --stop-early", None),
        ({"stop_batch": 2}, "--against, --max-items, --max-cost and --stop-batch belong to --stop-early", None),
    ],
)
def test_contradictory_options_are_a_usage_error(fields: dict[str, Any], message: str, option: str | None) -> None:
    with pytest.raises(UsageError) as raised:
        RunOptions(**fields)
    assert raised.value.message.startswith(message)
    assert raised.value.option == option
    assert raised.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"stop_early": True, "against": "ref", "resume": "y"}, "--stop-early starts a new run"),
        ({"stop_early": True, "against": "ref", "shard": SHARD}, "it cannot be sharded"),
    ],
)
def test_a_stop_early_run_refuses_resume_and_shard_when_built(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ScoregateError, match=message) as raised:
        RunOptions(**fields)
    assert raised.value.hint is not None and raised.value.exit_code == ExitCode.ERROR


def test_options_that_agree_are_built() -> None:
    options = RunOptions(shard=SHARD, group="ci-7", retry_errors=True, run_id="r", budget_usd=0.5)
    assert options.shard == SHARD and options.retry_errors
    assert RunOptions(stop_early=True, against="ref", max_items=20, stop_batch=5).against == "ref"
    assert RunOptions(resume="r", quarantine=True, retry_errors=True).quarantine


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
