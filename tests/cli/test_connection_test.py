"""`scoregate connection-test --base-url URL`: the model list, then one structured request, over real HTTP."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from scoregate.errors import ProviderUnavailable, ScoregateError
from scoregate.tracks.extraction import cli as extraction_cli
from scoregate.tracks.extraction.connection import SAMPLE_SCHEMA, run_connection_test
from support.scripted_openai import ScriptedOpenAI


def invoke(*args: str) -> tuple[int, str]:
    app = typer.Typer()
    app.command("connection-test")(extraction_cli.connection_test_command)
    app.command("unused")(lambda: None)  # two commands, so typer keeps the command name as the user types it
    result = CliRunner().invoke(app, ["connection-test", *args])
    return result.exit_code, " ".join(result.output.split())


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("COLUMNS", "250")


def test_a_schema_valid_reply_passes_and_the_request_is_the_one_a_run_sends(scripted_server: ScriptedOpenAI) -> None:
    code, out = invoke("--base-url", scripted_server.url)

    assert code == 0, out
    assert f"models at {scripted_server.url}: scripted-1" in out
    assert "ok the reply is JSON that obeys the schema" in out
    (request,) = scripted_server.chat_requests()
    assert request.body["model"] == "scripted-1"
    assert request.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "connection_test", "schema": SAMPLE_SCHEMA, "strict": True},
    }


def test_unparsable_and_schema_breaking_replies_fail_with_the_reason(scripted_server: ScriptedOpenAI) -> None:
    scripted_server.responder = lambda body: "Sure! Here is the JSON you asked for."
    code, out = invoke("--base-url", scripted_server.url)
    assert code == 1 and "failed the reply is not valid JSON" in out

    scripted_server.responder = lambda body: json.dumps({"name": "Sarah Johnson", "age": "41"})
    code, out = invoke("--base-url", scripted_server.url)
    assert code == 1 and "does not obey the schema" in out
    assert "$.age: '41' is not of type 'integer'" in out


def test_style_model_key_and_json_report(scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_KEY", "token-123")
    scripted_server.responder = lambda body: json.dumps(
        {"name": "Sarah Johnson", "age": 41, "occupation": "cardiologist", "workplace": "Metro General Hospital"}
    )
    code, out = invoke(
        "--base-url", scripted_server.url, "--model", "scripted-1", "--style", "guided_json",
        "--api-key-env", "VLLM_KEY", "--json",
    )  # fmt: skip

    assert code == 0, out
    report = json.loads(out)
    assert report["ok"] is True and report["field_f1"] == 1.0 and report["style"] == "guided_json"
    models, chat = scripted_server.requests
    assert models.headers["authorization"] == chat.headers["authorization"] == "Bearer token-123"
    assert chat.body["guided_json"] == SAMPLE_SCHEMA and "response_format" not in chat.body


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999/v1", "127.0.0.1:8000/v1", "http://:8000/v1"])
def test_a_base_url_that_is_not_an_endpoint_is_named_before_any_request(url: str) -> None:
    with pytest.raises(ScoregateError) as refused:
        run_connection_test(url)

    assert f"--base-url: {url!r} is not" in refused.value.render() and "http://HOST:8000/v1" in refused.value.render()


def test_wrong_model_unknown_style_and_unreachable_server_say_what_to_do(scripted_server: ScriptedOpenAI) -> None:
    with pytest.raises(ScoregateError) as wrong_model:
        run_connection_test(scripted_server.url, model="llama-3-8b")
    assert "model 'llama-3-8b' is not served" in wrong_model.value.render()
    assert "it serves: scripted-1" in wrong_model.value.render()

    code, out = invoke("--base-url", scripted_server.url, "--style", "xml")
    assert code == 2 and "--style must be one of json_schema, json_object_schema, guided_json" in out

    scripted_server.fail_next(401, path="/v1/models")
    with pytest.raises(ScoregateError) as refused:
        run_connection_test(scripted_server.url)
    assert "answered HTTP 401" in refused.value.render() and "--api-key-env" in refused.value.render()

    url = scripted_server.url
    scripted_server.down()
    with pytest.raises(ProviderUnavailable) as unreachable:
        run_connection_test(url)
    assert f"cannot reach {url}/models" in unreachable.value.render()
    assert "vllm serve" in unreachable.value.render()
