"""`promotion:` rules: the experiments whose gates must pass before a prompt is promoted, and optionally a replay of
its production traffic through the candidate (`replay: {min_items: N, not_worse: true}`) that `promote` checks."""

from __future__ import annotations

from pydantic import Field

from scoregate.catalog.models import Strict


class ReplayRule(Strict):
    """A promotion needs a replay of the candidate (`scoregate replay EXPERIMENT --production N`)."""

    min_items: int = Field(ge=1, description="The fewest production items the replay must have judged.")
    not_worse: bool = Field(default=True, description="Refuse a replay whose verdict is `worse`.")
    experiment: str | None = Field(
        default=None,
        description="The experiment replayed; default: the listed experiment with a `production:` entry.",
    )


class PromotionRule(Strict):
    """One prompt's promotion rule."""

    experiments: list[str] = Field(min_length=1, description="Experiments whose gates must pass.")
    replay: ReplayRule | None = Field(default=None, description="A replay of production the promotion needs.")


def as_rule(value: list[str] | PromotionRule) -> PromotionRule:
    """The rule a `promotion:` entry says (a plain list is the experiments, with no replay)."""
    return value if isinstance(value, PromotionRule) else PromotionRule(experiments=value)


def replay_problems(prompt: str, rule: PromotionRule, production: set[str], experiments: set[str]) -> list[str]:
    """What is wrong with a rule's replay: its experiment unknown, without production traffic, or not one."""
    if rule.replay is None:
        return []
    where = f"promotion.{prompt}.replay"
    named = rule.replay.experiment
    if named is not None:
        if named not in experiments:
            return [f"{where}.experiment: no experiment {named!r} under `experiments:`"]
        return [] if named in production else [f"{where}.experiment: {named!r} has no `production:` entry"]
    found = [e for e in rule.experiments if e in production]
    if len(found) != 1:
        listed = ", ".join(rule.experiments)
        what = "no experiment" if not found else "more than one experiment"
        return [f"{where}: {what} of [{listed}] has a `production:` entry; name it with `experiment:`"]
    return []


def filled(rule: PromotionRule, production: set[str]) -> PromotionRule:
    """The rule with its replay's experiment named (the one listed experiment with a `production:` entry)."""
    if rule.replay is None or rule.replay.experiment is not None:
        return rule
    found = next(e for e in rule.experiments if e in production)
    return rule.model_copy(update={"replay": rule.replay.model_copy(update={"experiment": found})})
