"""Typed, strict models of scoregate.yaml: composites, gates, pipeline stages, experiments, settings, the project."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from scoregate.catalog.budget_settings import BudgetSettings
from scoregate.catalog.canaries import CanarySpec
from scoregate.catalog.models import ModelSpec, PromptRoute, Strict
from scoregate.catalog.production import ProductionSpec
from scoregate.catalog.promotion_rules import PromotionRule, as_rule, filled, replay_problems
from scoregate.support.suggest import unknown_name


class CompositeSpec(Strict):
    """A per-item weighted sum of scores; null when any part is null."""

    weights: dict[str, float] = Field(min_length=1)
    description: str = ""


GateOp = Literal[">=", ">", "<=", "<", "=="]

CalibrationMetric = Literal[
    "spearman", "kendall", "pearson", "qwk", "exact", "within_one",
    "per_document.spearman", "per_document.kendall", "per_document.pearson",
]  # fmt: skip


class CalibrationRequirement(Strict):
    """A gate that also requires its judge to agree with human ratings (see `scoregate calibrate --save`)."""

    evaluator: str
    score_key: str | None = None
    metric: CalibrationMetric = "spearman"
    floor: float = Field(ge=-1, le=1)
    stat: Literal["value", "ci_low"] = "value"
    min_pairs: int = Field(default=2, ge=2)


GateEstimate = Literal["raw", "corrected"]
CORRECTED_STATS = ("mean", "ci_low", "ci_high")
"""The gate stats a corrected estimate gives (its mean and interval)."""

DEFAULT_MIN_SLICE_ITEMS = 10
"""Fewest paired items a slice of a slice gate needs to be tested (a gate's `min_slice_items` overrides it)."""


class GateSpec(Strict):
    """A threshold on a metric; pass / fail / incomplete."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    metric: str
    op: GateOp
    threshold: float
    stat: Literal["mean", "median", "min", "max", "every_item", "ci_low", "ci_high", "paired_noninferiority"] = Field(
        default="mean",
        description="`every_item`: the threshold must hold for each measured item; `paired_noninferiority`: "
        "compared item by item with the latest valid run of the `compare_to` label, within `margin`.",
    )
    compare_to: str | None = Field(
        default=None, description="Label whose latest valid run is the baseline (e.g. `production`)."
    )
    margin: float | None = Field(default=None, ge=0, description="Largest tolerated loss, in score units.")
    min_coverage: float | None = Field(default=None, ge=0, le=1, description="Default: settings.min_coverage.")
    datasets: list[str] | None = Field(default=None, description="Apply only on these datasets.")
    requires_calibration: CalibrationRequirement | None = Field(
        default=None, description="INCOMPLETE unless the judge's saved calibration reaches this floor."
    )
    slices: list[Annotated[str, Field(min_length=1)]] | None = Field(
        default=None,
        min_length=1,
        description="A regression gate also compared per slice of these item fields (`input.<f>`, `metadata.<f>` "
        "or a bare name: input, else metadata), Holm-adjusted across slices; it fails when a slice is worse by "
        "more than `margin`.",
    )
    estimate: GateEstimate | None = Field(
        default=None,
        description="`corrected`: gate on the judge score's bias-corrected mean and interval (its calibration set "
        "bound to the judge as it is now), INCOMPLETE where that cannot be computed; `raw`: the judge's own mean. "
        "Default: settings.gate_estimate.",
    )
    min_slice_items: int = Field(
        default=DEFAULT_MIN_SLICE_ITEMS,
        ge=2,
        description="A slice with fewer paired items is reported as too small: neither passed nor tested.",
    )

    @model_validator(mode="after")
    def _regression_fields_go_together(self) -> GateSpec:
        if (self.stat == "paired_noninferiority") != (self.compare_to is not None):
            raise ValueError("`stat: paired_noninferiority` and `compare_to:` go together (a regression gate)")
        if self.margin is not None and self.compare_to is None:
            raise ValueError("`margin:` applies only to a regression gate (`compare_to:`)")
        if self.slices is not None and self.compare_to is None:
            raise ValueError("`slices:` applies only to a regression gate (`compare_to:`): slices compare with its run")
        if self.slices is not None and len(set(self.slices)) != len(self.slices):
            raise ValueError(f"`slices:` names a field twice: {self.slices}")
        if self.estimate == "corrected" and self.compare_to is None and self.stat not in CORRECTED_STATS:
            raise ValueError(
                f"`estimate: corrected` gates on a corrected mean or its interval: use `stat:` mean, ci_low or "
                f"ci_high, not {self.stat}"
            )
        return self


class StageSpec(Strict):
    """One stage of a multi-stage pipeline: a prompt on a model; later stages read its output as `{{<name>}}`."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Template variable later stages read.")
    prompt: str
    model: str | None = Field(default=None, description="Model name; default: the run's model.")
    evaluators: list[str] = Field(
        default_factory=list, description="Evaluators of this stage's output; their keys are `<stage>.<key>`."
    )


class ExperimentSpec(Strict):
    """An experiment: a dataset, a prompt (or a route, or a pipeline of stages), a model and evaluators."""

    dataset: str
    prompt: str | PromptRoute = Field(description="The prompt; with `stages:`, the last stage's (filled in).")
    stages: list[StageSpec] = Field(
        default_factory=list,
        description="A pipeline: each stage a prompt + model; the last stage's output is scored by `evaluators`.",
    )
    stage_inputs: Literal["fixture", "live"] = Field(
        default="live",
        description="`live`: a stage reads earlier stages' outputs; `fixture`: it reads them from the item's "
        "input (fixed, comparable).",
    )
    model: str | None = None
    judge_model: str | None = None
    evaluators: list[str] = Field(default_factory=list)
    composites: list[str] = Field(default_factory=list)
    gates: list[str] = Field(default_factory=list)
    concurrency: int | None = Field(default=None, ge=1, le=1000)
    output_from: Literal["model", "expected_output"] = Field(
        default="model",
        description="`expected_output`: score each item's reference instead of calling the model "
        "(e.g. judges on gold summaries, for `scoregate calibrate`).",
    )
    description: str = ""

    @model_validator(mode="before")
    @classmethod
    def _prompt_from_stages(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("stages") and "prompt" not in data:
            last = data["stages"][-1]
            if isinstance(last, dict) and "prompt" in last:
                return {**data, "prompt": last["prompt"]}
        return data

    @model_validator(mode="after")
    def _stages_form_a_pipeline(self) -> ExperimentSpec:
        if not self.stages:
            return self
        names = [s.name for s in self.stages]
        if len(self.stages) < 2:
            raise ValueError("a pipeline needs at least two `stages:`; with one, use `prompt:`")
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be unique, got {names}")
        last = self.stages[-1]
        if self.prompt != last.prompt:
            raise ValueError("with `stages:`, leave out `prompt:` (the last stage's prompt is the experiment's)")
        if last.model is not None or last.evaluators:
            raise ValueError(
                "the last stage runs on the experiment's `model:` and is scored by its `evaluators:`; "
                "give neither `model:` nor `evaluators:` on it"
            )
        if self.output_from != "model":
            raise ValueError("`output_from: expected_output` scores references; it takes no `stages:`")
        return self


class FlakySettings(Strict):
    """When an item counts as flaky on an `every_item` gate (see docs/running/flaky-items.md; the defaults are
    chosen by bench/flaky_defaults.py)."""

    threshold: float = Field(
        default=0.35, ge=0, lt=1, description="Flaky when the verdict flip rate is above this (flips / comparisons)."
    )
    min_observations: int = Field(
        default=8, ge=2, description="Fewest measured observations (runs × repeats) before an item can be flaky."
    )
    window_runs: int = Field(default=20, ge=1, description="How many of the experiment's newest runs are read.")
    promotion: Literal["refuse", "refuse_if_breaking", "allow"] = Field(
        default="refuse_if_breaking",
        description="What `scoregate promote` makes of a gate that passed with flaky items kept out: `refuse` it, "
        "refuse it when a kept-out item broke the gate's rule in that run (`refuse_if_breaking`), or `allow` it.",
    )


class Settings(Strict):
    """Project-wide defaults."""

    model: str = "local"
    judge_model: str | None = None
    concurrency: int = Field(default=8, ge=1, le=1000)
    min_coverage: float = Field(default=0.8, ge=0, le=1)
    bootstrap_resamples: int = Field(default=2000, ge=100)
    confidence_level: float = Field(default=0.95, gt=0, lt=1)
    seed: int = 0
    gate_estimate: GateEstimate = Field(
        default="raw",
        description="`corrected`: every mean/ci_low/ci_high gate on a judge score uses its bias-corrected estimate "
        "(a gate's `estimate:` wins); other gates stay raw.",
    )
    max_consecutive_failures: int = Field(
        default=5,
        ge=0,
        description="Stop a run (interrupted, resumable) after this many calls in a row could not connect or got "
        "401/403/404 after their retries; 0 never stops.",
    )
    flaky: FlakySettings = Field(
        default_factory=FlakySettings,
        description="Items whose verdict flips between runs are kept out of `every_item` gates and listed.",
    )
    budget: BudgetSettings = Field(
        default_factory=BudgetSettings,
        description="Default budget of a run (see docs/running/budget.md); `run --budget-usd/--budget-minutes` win.",
    )
    local_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="Port of the embedded local model server for this project (default 8765, shared by every "
        "project on the machine that leaves it unset); SCOREGATE_LOCAL_PORT overrides it.",
    )
    shard_budget: Literal["divided", "whole"] = Field(
        default="divided",
        description="`divided`: each of N shards of a run gets 1/N of every model's max_connections; `whole`: each "
        "shard gets all of it (shards on separate endpoints or accounts).",
    )


EXPERIMENT_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.\-]*"
"""An experiment name: it starts every run id, so it is one safe path segment."""


class ProjectConfig(Strict):
    """`scoregate.yaml`."""

    project: str = "scoregate"
    settings: Settings = Field(default_factory=Settings)
    models: dict[str, ModelSpec] = Field(default_factory=dict)
    experiments: dict[str, ExperimentSpec] = Field(default_factory=dict)
    composites: dict[str, CompositeSpec] = Field(default_factory=dict)
    gates: list[GateSpec] = Field(default_factory=list)
    promotion: dict[str, list[str] | PromotionRule] = Field(
        default_factory=dict,
        description="Prompt name → experiments whose gates must pass before promotion, or a rule "
        "(`experiments:` and a `replay:` of production traffic).",
    )
    canaries: dict[str, CanarySpec] = Field(
        default_factory=dict, description="Judge (evaluator name) → its pinned calibration set (drift canary)."
    )
    production: dict[str, ProductionSpec] = Field(
        default_factory=dict, description="Experiment → its production traces on Langfuse and how items are read."
    )

    @model_validator(mode="after")
    def _names_are_unique_and_known(self) -> ProjectConfig:
        problems = []
        for name in self.experiments:
            if not re.fullmatch(EXPERIMENT_NAME, name):
                problems.append(
                    f"experiments.{name}: an experiment name becomes part of its run ids (runs/<name>-...): use "
                    "letters, digits, '_', '-' and '.', not starting with '.' or '-'"
                )
        seen: set[str] = set()
        for gate in self.gates:
            if gate.name in seen:
                problems.append(f"gates: two gates are named {gate.name!r}; give each gate its own name")
            seen.add(gate.name)
        for prompt, entry in self.promotion.items():
            rule = as_rule(entry)
            problems += [
                f"promotion.{prompt}: no experiment {e!r} under `experiments:`" + unknown_name(e, self.experiments)
                for e in rule.experiments
                if e not in self.experiments
            ]
            problems += replay_problems(prompt, rule, set(self.production), set(self.experiments))
        problems += [
            f"canaries.{judge}.experiment: no experiment {c.experiment!r} under `experiments:`"
            + unknown_name(c.experiment, self.experiments)
            for judge, c in self.canaries.items()
            if c.experiment not in self.experiments
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def promotion_rule(self, prompt: str) -> PromotionRule | None:
        """The promotion rule of `prompt` (a replay's experiment filled in), or None when it has none."""
        entry = self.promotion.get(prompt)
        return None if entry is None else filled(as_rule(entry), set(self.production))
