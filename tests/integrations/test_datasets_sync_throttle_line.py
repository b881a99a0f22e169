"""`scoregate datasets sync` says what paces its requests: the rate and the setting that changes it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import langfuse_env_fixture  # noqa: F401
from support.projects import CliResult

PACES = [("", "at most 90 requests a minute"), ("600", "at most 600 requests a minute"), ("0", "no limit")]


@pytest.mark.parametrize(("rpm", "said"), PACES)
def test_the_throttle_line_names_the_rate_and_scoregate_langfuse_rpm(
    scoregate: Callable[..., CliResult], langfuse_env: FakeLangfuse, monkeypatch: pytest.MonkeyPatch, rpm: str,
    said: str,
) -> None:  # fmt: skip
    monkeypatch.setenv("SCOREGATE_LANGFUSE_RPM", rpm)

    result = scoregate("datasets", "sync")

    assert result.code == 0, result.output
    words = " ".join(result.output.split())
    assert "s throttled" in words and said in words and "SCOREGATE_LANGFUSE_RPM" in words, result.output
