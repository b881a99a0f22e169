"""A fake Langfuse server for tests: the real SDK talks to it over HTTP on 127.0.0.1.

Use the pytest fixture by importing it into a conftest.py (pytest registers it as `fake_langfuse`):

    from support.fake_langfuse import fake_langfuse_fixture  # noqa: F401
"""

from collections.abc import Iterator

import pytest

from .server import FakeLangfuse, RecordedRequest, ServerMode
from .storage import State
from .validation import ValidationFailure

__all__ = ["FakeLangfuse", "RecordedRequest", "ServerMode", "State", "ValidationFailure", "fake_langfuse_fixture"]


@pytest.fixture(name="fake_langfuse")
def fake_langfuse_fixture() -> Iterator[FakeLangfuse]:
    """Yield a running FakeLangfuse (new-server mode, fresh keys and state); stop it afterwards."""
    with FakeLangfuse() as fake:
        yield fake
