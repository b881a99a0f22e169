"""Remove every known secret value from a text before it is stored, printed or mirrored.

Known secrets are the values of the environment variables that hold keys: every variable a model names
in `api_key_env`, the usual provider key variables, anything ending in `_API_KEY`, `_SECRET_KEY`,
`_SECRET` or `_TOKEN`, and the Langfuse secret in its HTTP Basic form (`base64(public:secret)`).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable

MASK = "[REDACTED]"
MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words
_SUFFIXES = ("_API_KEY", "_SECRET_KEY", "_SECRET", "_TOKEN", "_PASSWORD")
_registered: set[str] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LANGFUSE_SECRET_KEY"}


def register_secret_env(names: Iterable[str | None]) -> None:
    """Treat the values of these environment variables as secrets from now on (e.g. models' `api_key_env`)."""
    _registered.update(n for n in names if n)


def known_secrets() -> list[str]:
    """Return every secret value currently known, longest first (so a longer form is masked whole)."""
    env = os.environ
    names = {n for n in env if n.upper().endswith(_SUFFIXES)} | _registered
    values = {env[n] for n in names if len(env.get(n, "")) >= MIN_SECRET_LENGTH}
    public, secret = env.get("LANGFUSE_PUBLIC_KEY", ""), env.get("LANGFUSE_SECRET_KEY", "")
    if secret:
        values.add(base64.b64encode(f"{public}:{secret}".encode()).decode())
    for value in list(values):
        values.add(base64.b64encode(value.encode()).decode())
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    """Return `text` with every known secret value replaced by [REDACTED]."""
    if not text:
        return text
    for secret in known_secrets():
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_optional(text: str | None) -> str | None:
    """`redact`, passing None through."""
    return None if text is None else redact(text)
