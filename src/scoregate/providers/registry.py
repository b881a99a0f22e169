"""Build a provider from a model entry of scoregate.yaml."""

from __future__ import annotations

from scoregate.catalog.models import ModelSpec
from scoregate.providers.base import Provider
from scoregate.providers.local_server import local_base_url
from scoregate.providers.openai_compat import OpenAICompatibleProvider


def build_provider(spec: ModelSpec) -> Provider:
    """Return the provider for a model spec (the local model is an OpenAI-compatible llama.cpp server)."""
    if spec.provider == "anthropic":
        # The anthropic SDK takes seconds to import; load it only for Anthropic models, not on every command.
        from scoregate.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(spec)
    if spec.provider == "local":
        local = spec.model_copy(update={"base_url": spec.base_url or local_base_url()})
        return OpenAICompatibleProvider(local, default_style="json_object_schema")
    return OpenAICompatibleProvider(spec, default_style="json_schema")
