"""Typed, strict models of user files: items, prompts, score keys, models (scoregate.yaml: config_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from scoregate.catalog.names import MAX_ITEM_ID
from scoregate.store.vocabulary import Direction as Direction  # re-exported: the vocabulary is in store

ScoreDataType = Literal["numeric", "boolean", "categorical", "text"]
StructuredOutputStyle = Literal["json_schema", "json_object_schema", "guided_json", "none"]


class Strict(BaseModel):
    """Base for user files: unknown keys are errors, not silently ignored; NaN and infinity are not numbers."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# ---------------------------------------------------------------- datasets


class DatasetItem(Strict):
    """One test case of a dataset (one line of `datasets/<name>.jsonl`)."""

    id: str | None = Field(
        default=None, min_length=1, max_length=MAX_ITEM_ID, description="Unique item id; default: a content hash."
    )
    input: dict[str, Any] = Field(description="Fields the prompt template and evaluators read.")
    expected_output: Any = Field(default=None, description="Reference output, when the item has one.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form tags (feed, source...).")


class DatasetMeta(Strict):
    """The optional `datasets/<name>.yaml` beside a dataset."""

    description: str = ""
    input_schema: dict[str, Any] | None = Field(default=None, description="JSON Schema every `input` obeys.")
    expected_output_schema: dict[str, Any] | None = Field(
        default=None, description="JSON Schema every `expected_output` obeys."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    dimensions: list[str] | None = Field(
        default=None,
        description="Input fields put into each Langfuse trace's metadata and tags, for dashboard filters "
        "(default: the routing field and every `feed_*` / `*category*` field).",
    )


# ---------------------------------------------------------------- prompts


class ChatMessage(Strict):
    """One message of a chat prompt; `content` may hold `{{variable}}` placeholders."""

    role: Literal["system", "user", "assistant"]
    content: str


class ResponseFormat(Strict):
    """Structured output: the reply must be JSON obeying `schema`, or the schema each item carries (`schema_from`)."""

    name: str = "output"
    schema_: dict[str, Any] | None = Field(default=None, alias="schema", description="JSON Schema of the reply.")
    schema_from: str | None = Field(
        default=None,
        pattern=r"^input\.[A-Za-z_][A-Za-z0-9_]*$",
        description="`input.<field>`: each item's own JSON Schema of the reply (extraction datasets).",
    )
    strict: bool = True

    @model_validator(mode="after")
    def _one_schema(self) -> ResponseFormat:
        if (self.schema_ is None) == (self.schema_from is None):
            raise ValueError("give exactly one of `schema:` (one schema for all items) or `schema_from: input.<field>`")
        return self


class PromptConfig(Strict):
    """Model parameters stored with the prompt (mirrors Langfuse's prompt `config`)."""

    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    response_format: ResponseFormat | None = None


class PromptSpec(Strict):
    """`prompts/<name>.yaml`: a text or chat template with its config and labels."""

    name: str = Field(min_length=1)
    type: Literal["text", "chat"]
    prompt: str | None = Field(default=None, description="The template, for `type: text`.")
    messages: list[ChatMessage] | None = Field(default=None, description="The messages, for `type: chat`.")
    config: PromptConfig = Field(default_factory=PromptConfig)
    labels: list[str] = Field(default_factory=list)
    variables: dict[str, Any] = Field(
        default_factory=dict, description="Defaults for template variables an item may omit."
    )
    description: str = ""

    @model_validator(mode="after")
    def _body_matches_type(self) -> PromptSpec:
        if self.type == "text" and (self.prompt is None or self.messages is not None):
            raise ValueError("a text prompt needs `prompt:` (a string) and no `messages:`")
        if self.type == "chat" and (not self.messages or self.prompt is not None):
            raise ValueError("a chat prompt needs `messages:` (a non-empty list) and no `prompt:`")
        if "production" in self.labels:
            raise ValueError(
                "the `production` label is set only by `scoregate promote`, not in a prompt file: remove it and run "
                f"`scoregate promote {self.name}` once its gates pass (with Langfuse or without)"
            )
        return self


# ---------------------------------------------------------------- evaluators


class ScoreKey(Strict):
    """One score an evaluator writes, under an exact key (what dashboards aggregate)."""

    key: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    data_type: ScoreDataType = "numeric"
    range: tuple[float, float] | None = Field(default=None, description="Inclusive [min, max] for numeric.")
    categories: list[str] | None = None
    description: str = ""
    direction: Direction | None = Field(
        default=None,
        description="`higher` or `lower` is better, or `none` (never called better); default: higher for "
        "numeric and boolean scores, none for categorical and text.",
    )


class JudgeField(ScoreKey):
    """A score the judge returns in its JSON reply (field name = key)."""

    instruction: str = Field(default="", description="What the judge should put in this field.")


# ---------------------------------------------------------------- scoregate.yaml


PROVIDER_NAME = r"^[a-z][a-z0-9_]*$"
"""A provider's name in scoregate.yaml; which names exist is the provider registry's to say."""


class ModelSpec(Strict):
    """A model endpoint an experiment or judge can use."""

    provider: str = Field(
        pattern=PROVIDER_NAME,
        description="Which provider serves it: `openai` = any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp, "
        "Ollama), `anthropic`, `local` (the embedded model), `scripted` (canned replies, for tests).",
    )
    model: str
    base_url: str | None = None
    api_key_env: str | None = Field(default=None, description="Env var holding the key (never the key itself).")
    structured_output: StructuredOutputStyle | None = Field(
        default=None, description="How this endpoint takes a JSON schema; default by provider."
    )
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    timeout_s: float = Field(default=120.0, gt=0)
    max_connections: int = Field(default=16, ge=1)
    max_retries: int = Field(default=4, ge=0)
    input_cost_per_mtok: float | None = Field(default=None, ge=0, description="USD per million input tokens.")
    output_cost_per_mtok: float | None = Field(default=None, ge=0)
    options: dict[str, Any] = Field(
        default_factory=dict, description="Settings of the provider's own (`provider: scripted` takes its replies)."
    )

    @model_serializer(mode="wrap")
    def _no_empty_options(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave out empty `options`, so a model's receipts hash is what it was before the field existed."""
        data: dict[str, Any] = handler(self)
        if not self.options:
            data.pop("options", None)
        return data

    @field_validator("base_url")
    @classmethod
    def _base_url_is_http(cls, value: str | None) -> str | None:
        from scoregate.catalog.urls import url_problem

        problem = None if value is None else url_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value


class PromptRoute(Strict):
    """Choose a prompt per item from an input field, with a title-keyword fallback."""

    by: str = Field(description="Input field whose value picks the prompt, e.g. `desired_style`.")
    choices: dict[str, str] = Field(min_length=1, description="Field value → prompt name.")
    fallback_field: str | None = Field(default=None, description="Field searched when `by` is missing.")
    fallback_keywords: dict[str, list[str]] = Field(
        default_factory=dict, description="Choice → keywords (case-insensitive substring match)."
    )
    default: str | None = Field(default=None, description="Choice when nothing matches.")

    @model_validator(mode="after")
    def _choices_known(self) -> PromptRoute:
        for choice in [*self.fallback_keywords, *([self.default] if self.default else [])]:
            if choice not in self.choices:
                raise ValueError(f"route choice {choice!r} is not one of {sorted(self.choices)}")
        return self
