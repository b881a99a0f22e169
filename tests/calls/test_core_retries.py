"""Retries against a real HTTP endpoint: Retry-After honoured, transient errors and timeouts retried, 400 not."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Edit = Callable[[Path, Callable[[Any], None]], None]


def run_one_item(scoregate: Callable[..., CliResult], *, succeeds: bool = True) -> CliResult:
    result = scoregate("run", "counters", "--limit", "1", "--no-mlflow")
    assert result.code == (0 if succeeds else 1), result.output  # a run in which no item succeeded exits 1
    if not succeeds:
        assert "no item of run" in result.output and "succeeded" in result.output
    return result


def task_call(runs: Runs) -> dict[str, Any]:
    (item,) = runs.results()
    (call,) = [c for c in item["calls"] if c["purpose"] == "task"]
    return dict(call)


def test_429_waits_as_long_as_retry_after_says_and_counts_the_retry(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.fail_next(429, retry_after=1.5)

    run_one_item(scoregate)

    first, second = scripted_server.task_requests()
    assert second.at - first.at >= 1.4  # the default backoff alone would retry after ~0.5 s
    call = task_call(runs)
    assert (call["retries"], call["error"]) == (1, None)
    assert runs.results()[0]["error"] is None
    assert runs.summary()["run_metrics"]["retries_total"] == 1


def test_server_error_then_success_is_retried(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.fail_next(500)

    run_one_item(scoregate)

    assert len(scripted_server.task_requests()) == 2
    assert task_call(runs)["retries"] == 1
    assert runs.results()[0]["scores"][0]["value"] is not None


def test_timeout_then_success_is_retried(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs, project_dir: Path, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config["models"]["scripted"].update(timeout_s=1.0))
    scripted_server.delay_next(2.5)

    run_one_item(scoregate)

    assert len(scripted_server.task_requests()) == 2
    call = task_call(runs)
    assert (call["retries"], call["error"]) == (1, None)
    assert call["latency_ms"] < 1000  # the latency of the successful try, not of the timed-out one


def test_bad_request_fails_the_item_without_retrying(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.fail_next(400, body='{"error": {"message": "max_tokens is too large", "type": "invalid"}}')

    result = run_one_item(scoregate, succeeds=False)

    assert len(scripted_server.task_requests()) == 1
    (item,) = runs.results()
    assert "HTTP 400" in item["error"] and "max_tokens is too large" in item["error"]
    call = task_call(runs)
    assert call["retries"] == 0 and "HTTP 400" in call["error"]
    assert all(s["value"] is None and "HTTP 400" in s["reason"] for s in item["scores"])
    assert runs.summary()["run_metrics"]["error_count"] == 1
    assert "1 failed" in result.output


def test_retries_stop_at_max_retries_and_the_failure_is_recorded(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.fail_next(503, times=10, retry_after=0)

    run_one_item(scoregate, succeeds=False)

    assert len(scripted_server.task_requests()) == 3  # max_retries: 2 in the test project
    call = task_call(runs)
    assert call["retries"] == 2
    assert "HTTP 503" in call["error"]
    assert runs.summary()["run_metrics"]["success_rate"] == 0.0


def test_response_format_strict_flag_reaches_the_endpoint() -> None:
    """OpenAI's strict mode rejects schemas with optional fields; `strict: false` in the prompt must be sent as such."""
    from scoregate.providers.openai_compat import response_format_args

    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert response_format_args("json_schema", schema, "x", strict=False)["response_format"]["json_schema"] == {
        "name": "x",
        "schema": schema,
        "strict": False,
    }
    assert response_format_args("json_object_schema", schema, "x") == {
        "response_format": {"type": "json_object", "schema": schema}
    }
    assert response_format_args("guided_json", schema, "x") == {"extra_body": {"guided_json": schema}}
