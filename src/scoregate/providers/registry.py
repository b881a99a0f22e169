"""Every model provider by name, built lazily: a provider's module, and the SDK it imports, load only when a model
of that provider is used, and a missing SDK is reported with what to install.

A new provider is one module (a `Provider` subclass that sets its facts) and one line in `PROVIDERS`, or a plug-in:
an entry point in the group `scoregate.providers` of another installed package (docs/extending/plugins.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from scoregate.catalog.models import ModelSpec
from scoregate.errors import ScoregateError, ValidationFailed
from scoregate.providers.base import Provider, ProviderContext
from scoregate.support.registry import Plugin, Registry
from scoregate.support.suggest import unknown_name


@dataclass(frozen=True)
class ProviderEntry:
    """Where a provider's class lives (`module:Class`) and, when it imports an SDK, the pip requirement to install."""

    target: str
    install: str | None = None


PROVIDERS: dict[str, ProviderEntry] = {
    "openai": ProviderEntry("scoregate.providers.openai_compat:OpenAICompatibleProvider"),
    "anthropic": ProviderEntry("scoregate.providers.anthropic_provider:AnthropicProvider", "anthropic>=2.10,<3"),
    "local": ProviderEntry("scoregate.providers.local:LocalProvider"),
    "scripted": ProviderEntry("scoregate.providers.scripted:ScriptedProvider"),
}


def _adopt(loaded: object, plugin: Plugin) -> ProviderEntry:
    """A plug-in provider's entry, once its class is found to implement every method of `Provider`."""
    if not (isinstance(loaded, type) and issubclass(loaded, Provider)):
        raise ValueError(f"is not a Provider subclass (scoregate/providers/base.py): {type(loaded).__name__}")
    if loaded.__abstractmethods__:
        raise ValueError(
            f"does not implement {', '.join(sorted(loaded.__abstractmethods__))} "
            f"(a Provider implements {', '.join(sorted(Provider.__abstractmethods__))})"
        )
    return ProviderEntry(plugin.value)


REGISTRY: Registry[ProviderEntry] = Registry("scoregate.providers", "provider", lambda: PROVIDERS, _adopt)
"""The built-in providers and the plug-ins of the entry-point group `scoregate.providers`."""


class BrokenProvider(ScoregateError):
    """A registered provider that cannot be built: its module or class is missing, or it leaves a method out."""


def provider_class(provider: str) -> type[Provider]:
    """Import and return the class of a registered provider; raise ScoregateError naming what to install when its
    SDK is missing, and BrokenProvider when the class is missing or does not implement every method of `Provider`."""
    entry = REGISTRY[provider]
    module_name, _, class_name = entry.target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if not missing or missing.split(".")[0] == "scoregate":
            raise  # a module of scoregate itself: a bug, not an install step
        if missing == module_name:
            raise BrokenProvider(f"provider {provider!r}: no module {module_name} ({entry.target})") from None
        requirement = entry.install or missing.split(".")[0]
        raise ScoregateError(
            f"provider {provider!r} needs the Python package {missing!r}, which is not installed",
            hint=f"install it into scoregate's environment: pip install '{requirement}'",
        ) from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Provider)):
        what = "no class" if cls is None else "not a Provider subclass:"
        raise BrokenProvider(f"provider {provider!r}: module {module_name} has {what} {class_name!r}")
    if cls.__abstractmethods__:
        raise BrokenProvider(
            f"provider {provider!r} ({entry.target}) does not implement {', '.join(sorted(cls.__abstractmethods__))} "
            f"(a Provider implements {', '.join(sorted(Provider.__abstractmethods__))}: scoregate/providers/base.py)"
        )
    return cls


def _class_problem(provider: str) -> str | None:
    """Why `provider` cannot be built, or None; None too when only its SDK is missing (a run says what to install)."""
    try:
        provider_class(provider)
    except BrokenProvider as exc:
        return exc.message
    except ScoregateError:
        return None
    return None


def model_problems(name: str, spec: ModelSpec) -> list[str]:
    """What is wrong with model `name`'s provider or its `options`, one `scoregate.yaml: models...: problem` each.

    The provider's module is imported, to check that its class implements every method a run calls.
    """
    where = f"scoregate.yaml: models.{name}"
    if spec.provider not in REGISTRY:
        return [f"{where}.provider: no provider {spec.provider!r}{unknown_name(spec.provider, REGISTRY.names())}"]
    broken = _class_problem(spec.provider)
    if broken is not None:
        return [f"{where}.provider: {broken}"]
    if not spec.options:
        return []
    options = provider_class(spec.provider).options_model
    if options is None:
        return [f"{where}.options: provider {spec.provider!r} takes no options; remove `options:`"]
    try:
        options.model_validate(spec.options)
    except ValidationError as exc:
        return [
            f"{where}.options.{'.'.join(str(part) for part in error['loc'])}: {error['msg']}".replace(".options.:", ":")
            for error in exc.errors()
        ]
    return []


def models_problems(models: Mapping[str, ModelSpec]) -> list[str]:
    """`model_problems` of every model."""
    return [problem for name, spec in models.items() for problem in model_problems(name, spec)]


def build_provider(name: str, spec: ModelSpec, context: ProviderContext | None = None) -> Provider:
    """Return the provider of model `name` (imported on first use); raise ValidationFailed for an unknown provider
    or bad options."""
    problems = model_problems(name, spec)
    if problems:
        raise ValidationFailed(problems, hint="fix the model in scoregate.yaml (`scoregate validate` checks them all)")
    return provider_class(spec.provider)(spec, context)
