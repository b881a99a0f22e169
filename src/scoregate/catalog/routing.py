"""Which prompt serves an item: a fixed prompt, or a route on an input field with a keyword fallback."""

from __future__ import annotations

from typing import Any

from scoregate.catalog.models import PromptRoute


class RouteError(ValueError):
    """An item the route cannot place."""


def choose_prompt(route: str | PromptRoute, item_input: dict[str, Any]) -> str:
    """Return the prompt name for one item, or raise RouteError saying why none fits."""
    return route if isinstance(route, str) else route.choices[choose_route(route, item_input)]


def choose_route(route: PromptRoute, item_input: dict[str, Any]) -> str:
    """Return the route choice (e.g. the `desired_style`) for one item, inferred when the field is missing."""
    value = item_input.get(route.by)
    if value is not None:
        if value not in route.choices:
            raise RouteError(f"`{route.by}` is {value!r}; expected one of {sorted(route.choices)}")
        return str(value)
    choice = _choice_by_keywords(route, item_input)
    if choice is None:
        raise RouteError(f"item has no `{route.by}` and the route has no matching keyword or default")
    return choice


def inferred_fields(route: str | PromptRoute, item_input: dict[str, Any]) -> dict[str, str]:
    """Return `{route.by: choice}` when the item lacks the routing field and the choice was inferred, else {}."""
    if isinstance(route, str) or item_input.get(route.by) is not None:
        return {}
    return {route.by: choose_route(route, item_input)}


def _choice_by_keywords(route: PromptRoute, item_input: dict[str, Any]) -> str | None:
    text = item_input.get(route.fallback_field) if route.fallback_field else None
    if isinstance(text, str):
        lowered = text.lower()
        for choice, keywords in route.fallback_keywords.items():
            if any(k.lower() in lowered for k in keywords):
                return choice
    return route.default


def route_prompts(route: str | PromptRoute) -> list[str]:
    """Return every prompt name a route can choose."""
    return [route] if isinstance(route, str) else list(dict.fromkeys(route.choices.values()))
