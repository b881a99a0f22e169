"""`scoregate langfuse check`, and what every Langfuse command says when Langfuse is missing, wrong or down."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.integrations.langfuse.client import NOT_CONFIGURED, SDK_VERSION
from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import LANGFUSE_VARS, point_at
from support.langfuse_env import langfuse_env_fixture as langfuse_env_fixture  # the fixture
from support.projects import CliResult

Cli = Callable[..., CliResult]


def test_check_names_host_project_and_sdk(scoregate: Cli, langfuse_env: FakeLangfuse) -> None:
    result = scoregate("langfuse", "check", project=None)
    assert result.code == 0
    assert "Langfuse OK" in result.output
    assert langfuse_env.base_url in result.output
    assert "project Local Project (local-project, organization Local Org)" in result.output
    assert f"SDK {SDK_VERSION}" in result.output


@pytest.mark.parametrize(
    ("generation", "says"),
    [
        (
            "old",
            "server 4.16.0 (older than v4.59.0): scores are posted as score-create events to /api/public/ingestion",
        ),
        ("new", "server 4.59.0 (v4.59.0 or newer): scores are posted as batches to /api/public/scores"),
    ],
)
def test_check_names_the_server_version_and_how_scores_are_sent(
    generation: str, says: str, scoregate: Cli, langfuse_env: FakeLangfuse
) -> None:
    langfuse_env.server_mode = "old" if generation == "old" else "new"

    result = scoregate("langfuse", "check", project=None)

    assert result.code == 0, result.output
    assert " ".join(says.split()) in " ".join(result.output.split())


def test_check_of_a_server_hiding_its_version_says_what_its_answer_showed(
    scoregate: Cli, langfuse_env: FakeLangfuse
) -> None:
    langfuse_env.server_mode, langfuse_env.missing_apis = "old", ("/api/public/health",)

    result = scoregate("langfuse", "check", project=None)

    assert result.code == 0, result.output
    assert "server version not shown by /api/public/health (it refuses score arrays)" in " ".join(result.output.split())
    assert langfuse_env.state.scores == []  # the question was an empty array: nothing stored


def test_a_server_too_old_for_scoregate_is_refused_with_the_fix(scoregate: Cli, langfuse_env: FakeLangfuse) -> None:
    langfuse_env.server_version = "2.95.1"  # v2: no OpenTelemetry ingestion at all

    result = scoregate("langfuse", "check", project=None)

    assert result.code == 1
    text = " ".join(result.output.split())
    assert "is server 2.95.1, older than v3.63.0" in text and "upgrade the server to v4.59.0 or newer" in text


def test_wrong_secret_key_is_a_clear_error(
    scoregate: Cli, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_at(monkeypatch, fake_langfuse, LANGFUSE_SECRET_KEY="sk-lf-not-the-right-one")
    result = scoregate("langfuse", "check", project=None)
    assert result.code == 1
    assert f"Langfuse at {fake_langfuse.base_url} rejected the API keys (HTTP 401" in result.output
    assert "check LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY" in result.output
    assert "sk-lf-not-the-right-one" not in result.output


def test_host_that_is_not_langfuse_is_a_clear_error(
    scoregate: Cli, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = f"{fake_langfuse.base_url}/not-langfuse"  # a web server answering HTML 404 pages
    point_at(monkeypatch, fake_langfuse, LANGFUSE_HOST=wrong, LANGFUSE_BASE_URL=wrong)
    result = scoregate("langfuse", "check", project=None)
    assert result.code == 1
    assert f"{wrong} does not answer like a Langfuse server (HTTP 404" in result.output
    assert "LANGFUSE_HOST must be Langfuse's base URL" in result.output


def test_server_refusing_connections_is_a_clear_error(
    scoregate: Cli, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_at(monkeypatch, fake_langfuse)
    fake_langfuse.down()
    result = scoregate("langfuse", "check", project=None)
    assert result.code == 1
    assert f"cannot reach Langfuse at {fake_langfuse.base_url}" in result.output
    assert "is the server up?" in result.output


def test_server_answering_503_is_reported_as_failing(
    scoregate: Cli, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_at(monkeypatch, fake_langfuse)
    fake_langfuse.down(status=503)
    result = scoregate("langfuse", "check", project=None)
    assert result.code == 1
    assert f"Langfuse at {fake_langfuse.base_url} is failing (HTTP 503" in result.output
    api_calls = [r for r in fake_langfuse.requests if r.path != "/api/public/health"]  # health: the fast probe
    assert len(api_calls) == 1  # a check reports the server as it is: no retries


def test_a_url_without_scheme_is_named(
    scoregate: Cli, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = fake_langfuse.base_url.removeprefix("http://")
    point_at(monkeypatch, fake_langfuse, LANGFUSE_HOST=bare, LANGFUSE_BASE_URL=bare)
    result = scoregate("langfuse", "check", project=None)
    assert result.code == 1
    assert f"LANGFUSE_HOST {bare!r} is not a usable URL" in result.output


@pytest.mark.parametrize(
    "args",
    [("langfuse", "check"), ("datasets", "sync"), ("prompts", "sync"), ("scores", "import", "{ratings}")],
    ids=["langfuse check", "datasets sync", "prompts sync", "scores import"],
)
def test_without_the_variables_every_langfuse_command_fails_saying_so(
    args: tuple[str, ...], scoregate: Cli, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in LANGFUSE_VARS:
        monkeypatch.delenv(name, raising=False)
    ratings = project_dir / "ratings.csv"
    ratings.write_text("trace_id,key,value\n" + "a" * 32 + ",online_thumb,1\n", encoding="utf-8")
    project = None if args[0] == "langfuse" else project_dir
    result = scoregate(*(a.format(ratings=ratings) for a in args), project=project)
    assert result.code == 1
    assert NOT_CONFIGURED in result.output
    assert not (project_dir / "feedback").exists()


def test_a_bad_throttle_setting_is_named(
    scoregate: Cli, langfuse_env: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCOREGATE_LANGFUSE_RPM", "fast")
    result = scoregate("datasets", "sync")
    assert result.code == 1
    assert "SCOREGATE_LANGFUSE_RPM='fast' is not a number of requests per minute" in result.output
    assert langfuse_env.requests == []
