"""Per-item prompt routing: by field, by title keywords, and the inferred style handed to evaluators."""

from __future__ import annotations

import pytest

from scoregate.catalog.models import PromptRoute
from scoregate.catalog.routing import RouteError, choose_prompt, inferred_fields

ROUTE = PromptRoute(
    by="desired_style",
    choices={"catchup": "summarization-catchup", "howto": "summarization-howto"},
    fallback_field="title",
    fallback_keywords={"howto": ["how to", "workflow", "setup"]},
    default="catchup",
)


def test_the_field_picks_the_prompt_and_nothing_is_inferred() -> None:
    item = {"title": "How to ship", "desired_style": "catchup"}
    assert choose_prompt(ROUTE, item) == "summarization-catchup"
    assert inferred_fields(ROUTE, item) == {}


@pytest.mark.parametrize(
    ("title", "style"),
    [("How To set up Renovate", "howto"), ("Our release WORKFLOW", "howto"), ("Home lab setup", "howto"),
     ("Funding news of the week", "catchup")],
)  # fmt: skip
def test_a_missing_style_is_inferred_from_the_title(title: str, style: str) -> None:
    assert choose_prompt(ROUTE, {"title": title}) == f"summarization-{style}"
    assert inferred_fields(ROUTE, {"title": title}) == {"desired_style": style}


def test_an_unknown_style_value_is_an_error_naming_the_choices() -> None:
    with pytest.raises(RouteError, match="expected one of \\['catchup', 'howto'\\]"):
        choose_prompt(ROUTE, {"desired_style": "digest"})


def test_no_field_no_keyword_and_no_default_is_an_error() -> None:
    strict = ROUTE.model_copy(update={"default": None})
    with pytest.raises(RouteError, match="no matching keyword or default"):
        choose_prompt(strict, {"title": "Funding news"})
