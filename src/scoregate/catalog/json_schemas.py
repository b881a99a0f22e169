"""Publish a JSON Schema per user file kind, so editors can autocomplete and check the YAML."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from scoregate.catalog.config_models import ProjectConfig
from scoregate.catalog.dashboards import DashboardSpec
from scoregate.catalog.evaluators import EvaluatorKinds
from scoregate.catalog.models import DatasetItem, DatasetMeta, PromptSpec

FILE_KINDS: dict[str, Any] = {
    "scoregate": ProjectConfig,
    "prompt": PromptSpec,
    "evaluator": None,  # the evaluator kinds' specs, as the caller passes them
    "dataset-item": DatasetItem,
    "dataset-meta": DatasetMeta,
    "dashboard": DashboardSpec,
}


def schema_for(kind: str, evaluators: EvaluatorKinds) -> dict[str, Any]:
    """Return the JSON Schema of one file kind (an evaluator file: one of the kinds `evaluators` holds)."""
    adapter = evaluators.adapter if kind == "evaluator" else TypeAdapter(FILE_KINDS[kind])
    schema = adapter.json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": f"scoregate {kind}", **schema}


def write_schemas(directory: Path, evaluators: EvaluatorKinds, extra: Mapping[str, dict[str, Any]]) -> list[Path]:
    """Write `<kind>.schema.json` for every file kind, then each `extra` file name → schema; return the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    schemas = {f"{kind}.schema.json": schema_for(kind, evaluators) for kind in FILE_KINDS} | dict(extra)
    for name, schema in schemas.items():
        path = directory / name
        path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written
