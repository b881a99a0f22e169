"""`promotion:` in scoregate.yaml: a prompt's experiments as a list, or a rule with `replay: {min_items, not_worse}`
that `promote` checks (the replay's experiment: the listed one with a `production:` entry)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scoregate.catalog.config_models import ProjectConfig

PRODUCTION = {"mapping": {"input": {"title": "$.input.title"}}}


def _config(promotion: Any, production: dict[str, Any] | None = None) -> ProjectConfig:
    return ProjectConfig.model_validate(
        {
            "experiments": {
                "catchup": {"dataset": "catchup_v1", "prompt": "summarization-catchup"},
                "smoke": {"dataset": "smoke_v1", "prompt": "summarization-catchup"},
            },
            "production": {"catchup": PRODUCTION} if production is None else production,
            "promotion": {"summarization-catchup": promotion},
        }
    )


def test_a_rule_with_a_replay_names_its_experiments_and_the_replay_of_the_production_one() -> None:
    config = _config({"experiments": ["catchup", "smoke"], "replay": {"min_items": 20, "not_worse": True}})

    rule = config.promotion_rule("summarization-catchup")

    assert rule is not None and rule.experiments == ["catchup", "smoke"]
    assert rule.replay is not None
    assert (rule.replay.min_items, rule.replay.not_worse, rule.replay.experiment) == (20, True, "catchup")


def test_the_list_form_is_a_rule_without_a_replay() -> None:
    rule = _config(["catchup", "smoke"]).promotion_rule("summarization-catchup")

    assert rule is not None and rule.experiments == ["catchup", "smoke"] and rule.replay is None
    assert _config(["catchup"]).promotion_rule("other-prompt") is None


def test_a_replay_needs_an_experiment_with_production_traffic() -> None:
    with pytest.raises(ValidationError) as raised:
        _config({"experiments": ["smoke"], "replay": {"min_items": 5}}, production={})

    assert "promotion.summarization-catchup.replay: no experiment of [smoke] has a `production:` entry" in str(
        raised.value
    )


def test_a_replay_of_no_items_is_refused() -> None:
    with pytest.raises(ValidationError) as raised:
        _config({"experiments": ["catchup"], "replay": {"min_items": 0}})

    assert "min_items" in str(raised.value) and "greater than or equal to 1" in str(raised.value)


def test_an_unknown_experiment_in_a_rule_is_named() -> None:
    with pytest.raises(ValidationError) as raised:
        _config({"experiments": ["catchup", "howto"], "replay": {"min_items": 3}})

    assert "promotion.summarization-catchup: no experiment 'howto' under `experiments:`" in str(raised.value)
