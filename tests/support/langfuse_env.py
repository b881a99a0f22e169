"""Langfuse's environment variables, pointed at the fake Langfuse or cleared (the `langfuse_env` fixture)."""

from __future__ import annotations

import pytest

from support.fake_langfuse import FakeLangfuse

LANGFUSE_VARS = ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "LANGFUSE_BASE_URL")


def point_at(monkeypatch: pytest.MonkeyPatch, fake: FakeLangfuse, **overrides: str) -> None:
    """Set the Langfuse variables to the fake (with `overrides`), and lift the request throttle for speed."""
    for name, value in {**fake.env(), **overrides}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SCOREGATE_LANGFUSE_RPM", "0")


@pytest.fixture(name="langfuse_env")
def langfuse_env_fixture(fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch) -> FakeLangfuse:
    """The fake Langfuse server, with the environment pointing scoregate at it."""
    point_at(monkeypatch, fake_langfuse)
    return fake_langfuse
