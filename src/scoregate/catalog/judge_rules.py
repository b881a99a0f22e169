"""`rules/<name>.yaml`: which live traces a project's judges score in Langfuse (an evaluation rule each).

name: production_summaries
judges: [ev_actionability_v1, ev_faithfulness_v1]   # LLM-judge files of evaluators/
sampling: 0.1                                       # the share of matching traces scored
enabled: true
filter:
  trace_name: [summarize]                           # any of
  environment: [production]                         # any of
  tags: [podcast]                                   # any of
  metadata: {prompt_name: summarize}                # each key equals
  experiment_dataset: smoke_v1                      # only scoregate's experiment items of this dataset
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, TypeAdapter

from scoregate.catalog.models import Strict
from scoregate.catalog.yaml_files import load_model
from scoregate.errors import ValidationFailed

RULES_DIR = "rules"
NAME = r"^[A-Za-z][A-Za-z0-9_.-]*$"


class RuleFilter(Strict):
    """Which traces a rule admits: every condition given must hold (none given: every trace)."""

    trace_name: list[str] = Field(default_factory=list, description="Trace names, any of.")
    environment: list[str] = Field(default_factory=list, description="Environments, any of.")
    tags: list[str] = Field(default_factory=list, description="Trace tags, any of.")
    metadata: dict[str, str] = Field(default_factory=dict, description="Metadata keys, each equal to its value.")
    experiment_dataset: str | None = Field(
        default=None, description="Only the root spans of experiment items of this dataset (scoregate's own runs)."
    )


class RuleSpec(Strict):
    """One rule file: the judges it runs, on which traces, how often."""

    name: str = Field(pattern=NAME)
    description: str = ""
    judges: list[str] = Field(min_length=1, max_length=100, description="Evaluator files (LLM judges) it runs.")
    sampling: float = Field(default=1.0, ge=0, le=1, description="The share of matching traces scored.")
    enabled: bool = True
    filter: RuleFilter = Field(default_factory=RuleFilter)


_ADAPTER: TypeAdapter[RuleSpec] = TypeAdapter(RuleSpec)


def read_rules(root: Path) -> dict[str, RuleSpec]:
    """Every rule file of the project's rules/, by name; raise ValidationFailed listing every problem."""
    rules: dict[str, RuleSpec] = {}
    problems: list[str] = []
    for path in sorted((root / RULES_DIR).glob("*.yaml")):
        loaded = load_model(path, _ADAPTER)
        problems += loaded[1]
        spec = loaded[0]
        if spec is None:
            continue
        if spec.name != path.stem:
            problems.append(f"{path}: name {spec.name!r} differs from the file name; name the file {spec.name}.yaml")
        elif spec.name in rules:
            problems.append(f"{path}: a second rule named {spec.name!r}")
        else:
            rules[spec.name] = spec
    if problems:
        raise ValidationFailed(problems, hint=f"fix the files in {RULES_DIR}/")
    return rules
