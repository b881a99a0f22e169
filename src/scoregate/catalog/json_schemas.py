"""Publish a JSON Schema per user file kind, so editors can autocomplete and check the YAML."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from scoregate.catalog.dashboards import DashboardSpec
from scoregate.catalog.models import DatasetItem, DatasetMeta, EvaluatorSpec, ProjectConfig, PromptSpec

FILE_KINDS: dict[str, Any] = {
    "scoregate": ProjectConfig,
    "prompt": PromptSpec,
    "evaluator": EvaluatorSpec,
    "dataset-item": DatasetItem,
    "dataset-meta": DatasetMeta,
    "dashboard": DashboardSpec,
}


def schema_for(kind: str) -> dict[str, Any]:
    """Return the JSON Schema of one file kind."""
    schema = TypeAdapter(FILE_KINDS[kind]).json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": f"scoregate {kind}", **schema}


def write_schemas(directory: Path) -> list[Path]:
    """Write `<kind>.schema.json` for every file kind; return the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for kind in FILE_KINDS:
        path = directory / f"{kind}.schema.json"
        path.write_text(json.dumps(schema_for(kind), indent=2) + "\n", encoding="utf-8")
        written.append(path)
    from scoregate.tracks.tags.gold import GOLD_SCHEMA, SCHEMA_FILE  # gold-label files of the tags track

    path = directory / SCHEMA_FILE
    path.write_text(json.dumps(GOLD_SCHEMA, indent=2) + "\n", encoding="utf-8")
    written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas")):
        print(written_path)
