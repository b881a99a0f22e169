"""`kind: llm_judge`: a model grades the output with a rubric and answers in JSON (the code: `scoring.judge`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from scoregate.catalog.evaluators import EvaluatorKind, EvaluatorSpec
from scoregate.catalog.models import Direction, JudgeField, ScoreKey


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

    @model_validator(mode="after")
    def _score_is_gradable(self) -> LlmJudgeSpec:
        if self.score.data_type == "numeric" and self.score.range is None:
            raise ValueError("a numeric judge score needs `range: [min, max]`")
        if self.score.data_type not in ("numeric", "boolean", "categorical"):
            raise ValueError("the primary judge score must be numeric, boolean or categorical")
        return self

    def score_keys(self) -> list[str]:
        """The primary score, the extra fields, then the reasoning key when set."""
        keys = [self.score.key, *(e.key for e in self.extra)]
        return [*keys, self.reasoning_key] if self.reasoning_key else keys

    def directions(self) -> dict[str, Direction]:
        """Each field's `direction:`; default higher for numeric and boolean fields, none for the others."""
        out: dict[str, Direction] = {}
        for field in (self.score, *self.extra):
            default: Direction = "higher" if field.data_type in ("numeric", "boolean") else "none"
            out[field.key] = field.direction or default
        return out

    def described_scores(self) -> list[ScoreKey]:
        """The primary score and the extra fields, as the file describes them."""
        return [self.score, *self.extra]

    def score_ranges(self) -> dict[str, tuple[float, float]]:
        """The range of every numeric field that states one."""
        return {f.key: f.range for f in (self.score, *self.extra) if f.data_type == "numeric" and f.range}

    def named_models(self) -> list[str]:
        """The judge model the file names, if any."""
        return [self.model] if self.model else []

    def models_called(self, default_judge: str) -> list[str]:
        """The file's judge model, else the run's."""
        return [self.model or default_judge]


def _build(spec: LlmJudgeSpec, default_judge_model: str | None) -> Any:
    from scoregate.scoring.judge import LlmJudge

    return LlmJudge(spec, default_judge_model)


KIND = EvaluatorKind("llm_judge", LlmJudgeSpec, _build)


def as_llm_judge(spec: EvaluatorSpec | None) -> LlmJudgeSpec | None:
    """The spec as an LLM judge's, or None for another kind (or none): what only a judge has (its prompt, rubric,
    calibration, canary, pairwise use) is asked of the kind here, never by type checks in the callers."""
    return spec if isinstance(spec, LlmJudgeSpec) else None
