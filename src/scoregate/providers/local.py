"""`provider: local`: the embedded llama.cpp server (see `local_server`), spoken to as an OpenAI-compatible endpoint."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from scoregate.providers.local_server import local_base_url, local_port, sharing_note
from scoregate.providers.openai_compat import OpenAICompatibleProvider

LOCAL_CONNECTIONS = 2
"""Calls in flight to the embedded llama.cpp server unless `max_connections` is set: it answers one at a time,
so more would only spend their `timeout_s` queueing there (an item's judges run side by side)."""


class LocalProvider(OpenAICompatibleProvider):
    """SmolLM2 on the project's port (`settings.local_port`, `SCOREGATE_LOCAL_PORT`, default 8765); free, no key.

    Its failures get the embedded server's hints (`on_embedded_server`), wherever its `base_url` points.
    """

    key_env_var = None
    key_hint = ""
    default_base_url = None
    structured_output = "json_object_schema"
    default_connections = LOCAL_CONNECTIONS
    known_prices: ClassVar[Mapping[str, tuple[float, float]]] = {}  # not OpenAI's list: nobody is paid

    def base_url(self) -> str:
        """The model's `base_url`, else the embedded server on the project's port."""
        return self.spec.base_url or local_base_url(local_port(self.context.settings.local_port))

    def price(self) -> tuple[float, float] | None:
        """The model's own prices when set, else nothing: the model runs on this machine."""
        return super().price() or (0.0, 0.0)

    def on_embedded_server(self) -> bool:
        """Always: a `provider: local` model is the embedded server's."""
        return True

    def start_note(self) -> str | None:
        """Whose server this is and how busy, when another project started it."""
        return sharing_note(self.context.root, self.endpoint) if self.context.root is not None else None
