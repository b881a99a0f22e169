"""A call's cost from a price per million tokens, so every call's cost is known or honestly null.

Each provider owns its price list (`Provider.known_prices`) and the model's own prices win (`Provider.price`).
"""

from __future__ import annotations


def call_cost(price: tuple[float, float] | None, tokens_in: int | None, tokens_out: int | None) -> float | None:
    """Return the USD cost of one call, or None when the price or the usage is unknown."""
    if price is None or tokens_in is None or tokens_out is None:
        return None
    return (tokens_in * price[0] + tokens_out * price[1]) / 1_000_000
