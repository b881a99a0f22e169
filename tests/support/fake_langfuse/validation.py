"""Validate request bodies against the installed Langfuse SDK's own API models.

The models come from `langfuse.api` of whichever SDK is installed (4.x or 5.x). A body fails when the
model rejects it or when it carries a key the model does not know under its wire name (a snake_case
`dataset_name` where the API expects `datasetName` is an error here, although the real server would
silently drop it). Endpoints whose model the installed SDK no longer ships (SDK 5 dropped ingestion
and dataset-run-items) fall back to local copies of the SDK 4 models.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import langfuse.api as lf_api
import pydantic
from langfuse.api.core.pydantic_utilities import parse_obj_as
from langfuse.api.core.serialization import FieldMetadata


@dataclass(frozen=True)
class ValidationFailure:
    """A request body the fake refused with 400, and why."""

    method: str
    path: str
    model: str
    errors: list[str]
    body: Any = field(repr=False)


class _Sdk4DatasetRunItemRequest(pydantic.BaseModel):
    """SDK 4's CreateDatasetRunItemRequest (absent from SDK 5)."""

    run_name: str = pydantic.Field(alias="runName")
    run_description: str | None = pydantic.Field(default=None, alias="runDescription")
    metadata: Any = None
    dataset_item_id: str = pydantic.Field(alias="datasetItemId")
    observation_id: str | None = pydantic.Field(default=None, alias="observationId")
    trace_id: str | None = pydantic.Field(default=None, alias="traceId")
    dataset_version: dt.datetime | None = pydantic.Field(default=None, alias="datasetVersion")
    created_at: dt.datetime | None = pydantic.Field(default=None, alias="createdAt")


class _IngestionEnvelope(pydantic.BaseModel):
    """One event of SDK 4's ingestion batch, when the SDK's IngestionEvent union is not installed."""

    id: str
    type: str
    timestamp: str
    body: dict[str, Any]
    metadata: Any = None


class _IngestionBatch(pydantic.BaseModel):
    """Body of POST /api/public/ingestion (`batch` of events plus SDK metadata)."""

    batch: list[dict[str, Any]]
    metadata: Any = None


class _PromptLabelsPatch(pydantic.BaseModel):
    """Body of PATCH /api/public/v2/prompts/{name}/versions/{version} as `prompt_version.update` sends it."""

    new_labels: list[str] = pydantic.Field(alias="newLabels")


_FALLBACKS: dict[str, Any] = {
    "CreateDatasetRunItemRequest": _Sdk4DatasetRunItemRequest,
    "IngestionEvent": _IngestionEnvelope,
    "IngestionBatch": _IngestionBatch,
    "PromptLabelsPatch": _PromptLabelsPatch,
}


def _array_score_model() -> Any:
    """One score of POST /api/public/scores' array (v4.59+): SDK 5's CreateScoreRequest, which has `timestamp`;
    under SDK 4 (whose model lacks it) the same model with the field added."""
    base = lf_api.CreateScoreRequest
    if "timestamp" in base.model_fields:
        return base
    return pydantic.create_model("CreateScoreRequest", __base__=base, timestamp=(dt.datetime | None, None))


def sdk_model(name: str) -> Any:
    """Return the `langfuse.api` type called `name`, or the local fallback when this SDK lacks it."""
    if name == "ArrayScore":
        return _array_score_model()
    model = getattr(lf_api, name, None)
    if model is None:
        import langfuse.api.unstable as lf_unstable  # dashboards and widgets (both SDK majors ship them here)

        model = getattr(lf_unstable, name, None)
    if model is None:
        model = _FALLBACKS[name]
    return model


def has_sdk_model(name: str) -> bool:
    """Tell whether the installed SDK ships the API type `name` (SDK 5 dropped some of SDK 4's)."""
    return getattr(lf_api, name, None) is not None


def _wire_names(model_cls: type[pydantic.BaseModel]) -> dict[str, str]:
    """Map each field's wire name (Fern alias, pydantic alias or name) to its attribute name."""
    names = {}
    for attr, info in model_cls.model_fields.items():
        wire = info.alias or attr
        for meta in info.metadata:
            if isinstance(meta, FieldMetadata):
                wire = meta.alias
        names[wire] = attr
    return names


def _unknown_keys(parsed: Any, raw: Any, where: str) -> list[str]:
    """List keys of `raw` that the parsed model does not know by their wire name, recursively."""
    if isinstance(parsed, list) and isinstance(raw, list):
        return [
            err
            for i, (p, r) in enumerate(zip(parsed, raw, strict=False))
            for err in _unknown_keys(p, r, f"{where}[{i}]")
        ]
    if not isinstance(parsed, pydantic.BaseModel) or not isinstance(raw, dict):
        return []
    wire = _wire_names(type(parsed))
    errors = [f"{where}.{key}: unknown key for {type(parsed).__name__}" for key in raw if key not in wire]
    for key, attr in wire.items():
        if key in raw:
            errors += _unknown_keys(getattr(parsed, attr), raw[key], f"{where}.{key}")
    return errors


def validate_body(model_name: str, body: Any, *, many: bool = False) -> tuple[Any, list[str]]:
    """Parse `body` with the SDK model `model_name` (a list of them when `many`); return (parsed, errors)."""
    model = sdk_model(model_name)
    type_: Any = list[model] if many else model  # type: ignore[valid-type]
    try:
        parsed = parse_obj_as(type_, body)
    except pydantic.ValidationError as exc:
        return None, [f"{'.'.join(str(p) for p in e['loc']) or '<body>'}: {e['msg']}" for e in exc.errors()]
    except (TypeError, ValueError, AttributeError) as exc:
        return None, [f"<body>: {exc}"]
    return parsed, _unknown_keys(parsed, body, "<body>")
