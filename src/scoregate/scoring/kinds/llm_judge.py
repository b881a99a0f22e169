"""`kind: llm_judge`: a model grades the output with a rubric and answers in JSON (the code: `scoring.judge`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from scoregate.catalog.evaluators import EvaluatorKind, EvaluatorSpec
from scoregate.catalog.models import Direction, JudgeField, ScoreKey, Strict

FIRST_SUFFIX = "_first"
CONFIDENCE_SUFFIX = "_first_confidence"


class JudgeCascade(Strict):
    """`cascade:`: a cheaper first judge (same rubric) answers when its k samples agree enough; else this judge."""

    first_model: str = Field(description="The cheaper first judge's model, from scoregate.yaml.")
    samples: int = Field(default=5, ge=2, le=9, description="How many times the first judge is asked per item.")
    target: float = Field(description="Agreement with humans guaranteed on the items the first judge keeps.")
    delta: float = Field(default=0.1, description="The guarantee fails with probability at most delta.")
    tolerance: float | None = Field(
        default=None, ge=0, description="Agreement: |judge - human| <= tolerance; default 0.5 numeric, 0 boolean."
    )
    _threshold: float | None = PrivateAttr(default=None)

    @field_validator("target")
    @classmethod
    def _target_is_a_share(cls, value: float) -> float:
        if value > 1:
            raise ValueError(
                f"{value:g} is above 1: the target is the share of kept items that agree with humans, e.g. 0.8"
            )
        if value <= 0:
            raise ValueError(f"{value:g} is not above 0: the target is a share of items, e.g. 0.8")
        return value

    @field_validator("delta")
    @classmethod
    def _delta_is_a_probability(cls, value: float) -> float:
        if value <= 0:
            raise ValueError(f"{value:g} would ask for certainty, which no calibration set gives: use e.g. 0.1")
        if value >= 1:
            raise ValueError(f"{value:g} is not below 1: delta is the chance the guarantee fails, e.g. 0.1")
        return value

    @property
    def threshold(self) -> float | None:
        """The first judge's confidence threshold a saved cascade calibration gave (None: not calibrated)."""
        return self._threshold


class LlmJudgeSpec(EvaluatorSpec):
    """`kind: llm_judge`: a model grades the output with a rubric and answers in JSON."""

    kind: Literal["llm_judge"]
    prompt: str = Field(description="Evaluation prompt with `{{variable}}` placeholders.")
    reasoning_prompt: str = Field(default="", description="How the judge should justify its score.")
    variables: dict[str, str] = Field(
        description="Template variable → source path: `output`, `input.<field>`, `expected_output`, `metadata.<f>`."
    )
    score: JudgeField = Field(description="The primary score (numeric with a range, or boolean).")
    reasoning_key: str | None = Field(default=None, description="Key under which the reasoning is stored.")
    extra: list[JudgeField] = Field(default_factory=list, description="Further fields of the JSON reply.")
    model: str | None = Field(default=None, description="Model name from scoregate.yaml; default: judge_model.")
    temperature: float = Field(default=0.0, ge=0, le=0.5)
    max_tokens: int = Field(default=256, gt=0)
    samples: int = Field(default=1, ge=1, le=9, description="Self-consistency: median of k samples.")
    cascade: JudgeCascade | None = Field(
        default=None, description="A cheaper first judge that answers when sure (docs/results/judge-cascade.md)."
    )

    @model_validator(mode="after")
    def _score_is_gradable(self) -> LlmJudgeSpec:
        if self.score.data_type == "numeric" and self.score.range is None:
            raise ValueError("a numeric judge score needs `range: [min, max]`")
        if self.score.data_type not in ("numeric", "boolean", "categorical"):
            raise ValueError("the primary judge score must be numeric, boolean or categorical")
        if self.cascade is not None:
            if self.score.data_type == "categorical":
                raise ValueError("cascade: needs a numeric or boolean primary score, to measure agreement with humans")
            if self.cascade.first_model == self.model:
                raise ValueError(
                    f"cascade.first_model: {self.model!r} is the judge's own model: a judge cannot be its own "
                    "cascade (name a cheaper model, or remove cascade:)"
                )
        return self

    def score_keys(self) -> list[str]:
        """The primary score, the extra fields, then the reasoning key when set."""
        keys = [self.score.key, *(e.key for e in self.extra)]
        keys = [*keys, self.reasoning_key] if self.reasoning_key else keys
        return [*keys, *self.cascade_keys()]

    def cascade_keys(self) -> list[str]:
        """The first judge's answer and confidence, written beside the scores when the judge is a cascade."""
        key = self.score.key
        return [key + FIRST_SUFFIX, key + CONFIDENCE_SUFFIX] if self.cascade else []

    def directions(self) -> dict[str, Direction]:
        """Each field's `direction:`; default higher for numeric and boolean fields, none for the others."""
        out: dict[str, Direction] = {}
        for field in (self.score, *self.extra):
            default: Direction = "higher" if field.data_type in ("numeric", "boolean") else "none"
            out[field.key] = field.direction or default
        if self.cascade:
            first, confidence = self.cascade_keys()
            out[first] = out[self.score.key]
            out[confidence] = "none"
        return out

    def described_scores(self) -> list[ScoreKey]:
        """The primary score and the extra fields, as the file describes them."""
        return [self.score, *self.extra]

    def score_ranges(self) -> dict[str, tuple[float, float]]:
        """The range of every numeric field that states one."""
        return {f.key: f.range for f in (self.score, *self.extra) if f.data_type == "numeric" and f.range}

    def named_models(self) -> list[str]:
        """The judge model the file names, if any."""
        named = [self.model] if self.model else []
        return [*named, self.cascade.first_model] if self.cascade else named

    def models_called(self, default_judge: str) -> list[str]:
        """The file's judge model, else the run's; then a cascade's first judge."""
        return [self.model or default_judge, *([self.cascade.first_model] if self.cascade else [])]


def _build(spec: LlmJudgeSpec, default_judge_model: str | None) -> Any:
    from scoregate.scoring.judge import CascadeJudge, LlmJudge

    return LlmJudge(spec, default_judge_model) if spec.cascade is None else CascadeJudge(spec, default_judge_model)


def with_threshold(spec: LlmJudgeSpec, threshold: float | None) -> LlmJudgeSpec:
    """A copy of a cascade judge's spec whose first judge keeps the items at or above `threshold` (None: none)."""
    if spec.cascade is None:
        return spec
    cascade = spec.cascade.model_copy()
    cascade._threshold = threshold
    return spec.model_copy(update={"cascade": cascade})


KIND = EvaluatorKind("llm_judge", LlmJudgeSpec, _build)


def as_llm_judge(spec: EvaluatorSpec | None) -> LlmJudgeSpec | None:
    """The spec as an LLM judge's, or None for another kind (or none): what only a judge has (its prompt, rubric,
    calibration, canary, pairwise use) is asked of the kind here, never by type checks in the callers."""
    return spec if isinstance(spec, LlmJudgeSpec) else None
