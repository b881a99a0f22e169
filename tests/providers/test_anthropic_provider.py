"""The Anthropic provider with the anthropic SDK `make setup` installs, against a local Messages API server that
checks request bodies as the real API does (tests/support/anthropic_messages.py): judge calls are accepted and
scored."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from scoregate.catalog.models import ModelSpec
from scoregate.providers.anthropic_provider import AnthropicProvider
from scoregate.providers.base import CompletionRequest
from support.anthropic_messages import AnthropicMessages
from support.projects import CliResult, Runs
from support.scripted_openai import json_for_schema

Edit = Callable[[Path, Callable[[Any], None]], None]
JUDGES = ("ev_actionability_v1", "ev_faithfulness_v1", "ev_conciseness_v1")
SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
    "required": ["reasoning", "score"],
    "additionalProperties": False,
}


@pytest.fixture
def messages_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicMessages]:
    """The local Messages API, with a key in ANTHROPIC_API_KEY."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    server = AnthropicMessages(tool_input=lambda schema: json_for_schema(schema))
    try:
        yield server
    finally:
        server.close()


def test_the_sdk_is_the_major_version_make_setup_installs() -> None:
    assert anthropic.__version__.split(".")[0] == "2"


def test_a_judge_request_with_a_temperature_is_accepted_by_the_messages_api(messages_api: AnthropicMessages) -> None:
    spec = ModelSpec(provider="anthropic", model="claude-test", base_url=messages_api.url, temperature=0.3,
                     max_retries=0)  # fmt: skip
    request = CompletionRequest(
        messages=({"role": "system", "content": "You are a strict judge."}, {"role": "user", "content": "Rate it."}),
        temperature=0.0,
        max_tokens=300,
        json_schema=SCHEMA,
        schema_name="ev_faithfulness_v1",
    )

    async def ask() -> Any:
        provider = AnthropicProvider(spec)
        try:
            return await provider.complete(request)
        finally:
            await provider.aclose()

    completion = asyncio.run(ask())

    assert messages_api.rejected == []
    assert json.loads(completion.text) == {"reasoning": "The summary is grounded and specific.", "score": 5}
    assert (completion.tokens_in, completion.tokens_out, completion.finish_reason) == (7, 30, "tool_use")
    headers, body = messages_api.requests[0]
    assert headers["anthropic-version"] == "2026-10-21"  # the version the SDK speaks: no sampling parameters
    assert body["system"] == "You are a strict judge." and body["messages"] == [{"role": "user", "content": "Rate it."}]
    assert body["tool_choice"] == {"type": "tool", "name": "ev_faithfulness_v1"}
    assert "temperature" not in body


def test_a_run_with_an_anthropic_judge_yields_real_scores(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    edit_yaml: Edit,
    runs: Runs,
    messages_api: AnthropicMessages,
) -> None:
    def claude_judges(config: dict[str, Any]) -> None:
        config["models"]["claude"] = {"provider": "anthropic", "model": "claude-test", "base_url": messages_api.url,
                                      "max_retries": 0, "temperature": 0.2}  # fmt: skip
        config["settings"]["judge_model"] = "claude"

    edit_yaml(project_dir / "scoregate.yaml", claude_judges)

    result = scoregate("run", "smoke", "--no-mlflow")

    assert result.code in (0, 3), result.output
    assert messages_api.rejected == []
    judged = [s for r in runs.results() for s in r["scores"] if s["evaluator"] in JUDGES]
    assert len(judged) == 6 * 7  # per item: 3 scores, a count and 3 reasoning texts
    assert [s for s in judged if s["value"] is None] == []
    assert [s["value"] for s in judged if s["name"].endswith("_score")] == [5] * 6 * len(JUDGES)
    bodies = [body for _headers, body in messages_api.requests]
    assert sum(1 for b in bodies if "tool_choice" in b) == 6 * len(JUDGES)  # one call per item and judge
