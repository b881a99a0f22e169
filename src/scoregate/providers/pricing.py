"""Prices per million tokens, so every call's cost is known or honestly null."""

from __future__ import annotations

from scoregate.catalog.models import ModelSpec

# USD per million (input, output) tokens, from the providers' public price lists.
KNOWN_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "claude-3-5-haiku-latest": (0.80, 4.00),
    "claude-3-5-sonnet-latest": (3.00, 15.00),
    "claude-sonnet-4-0": (3.00, 15.00),
}


def price_per_mtok(spec: ModelSpec) -> tuple[float, float] | None:
    """Return (input, output) USD per million tokens for a model, or None when unknown."""
    if spec.input_cost_per_mtok is not None and spec.output_cost_per_mtok is not None:
        return spec.input_cost_per_mtok, spec.output_cost_per_mtok
    if spec.provider == "local":
        return 0.0, 0.0
    return KNOWN_PRICES.get(spec.model)


def call_cost(price: tuple[float, float] | None, tokens_in: int | None, tokens_out: int | None) -> float | None:
    """Return the USD cost of one call, or None when the price or the usage is unknown."""
    if price is None or tokens_in is None or tokens_out is None:
        return None
    return (tokens_in * price[0] + tokens_out * price[1]) / 1_000_000
