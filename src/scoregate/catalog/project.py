"""Load a scoregate project (scoregate.yaml, prompts/, evaluators/, datasets/) into typed specs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from scoregate.catalog.config_models import ProjectConfig
from scoregate.catalog.datasets import DatasetRef
from scoregate.catalog.evaluators import EvaluatorKinds, EvaluatorSpec
from scoregate.catalog.models import DatasetMeta, PromptSpec
from scoregate.catalog.names import name_problem
from scoregate.catalog.yaml_files import load_model
from scoregate.errors import ScoregateError, ValidationFailed
from scoregate.support.redaction import register_secret_env

CONFIG_FILE = "scoregate.yaml"

_CONFIG = TypeAdapter(ProjectConfig)
_PROMPT = TypeAdapter(PromptSpec)
_DATASET_META = TypeAdapter(DatasetMeta)


@dataclass
class Project:
    """Every spec of a project, keyed by name, with where each came from."""

    root: Path
    config: ProjectConfig
    kinds: EvaluatorKinds
    """The evaluator kinds the project was read with: they parse its evaluator files and build their evaluators."""
    prompts: dict[str, PromptSpec] = field(default_factory=dict)
    evaluators: dict[str, EvaluatorSpec] = field(default_factory=dict)
    datasets: dict[str, DatasetRef] = field(default_factory=dict)
    sources: dict[str, Path] = field(default_factory=dict)

    @property
    def config_path(self) -> Path:
        """Path of scoregate.yaml."""
        return self.root / CONFIG_FILE

    def source(self, kind: str, name: str) -> str:
        """Return the file a spec was read from, for error messages."""
        return str(self.sources.get(f"{kind}:{name}", f"{kind} {name!r}"))


def find_root(start: Path) -> Path:
    """Return the nearest directory at or above `start` holding scoregate.yaml."""
    for candidate in [start, *start.parents]:
        if (candidate / CONFIG_FILE).is_file():
            return candidate
        why = _not_a_file(candidate / CONFIG_FILE)
        if why is not None:
            raise ScoregateError(
                f"{CONFIG_FILE} {why}", where=str(candidate / CONFIG_FILE), hint=f"make it the project's {CONFIG_FILE}"
            )
    raise ScoregateError(
        f"no {CONFIG_FILE} found in {start} or any parent directory",
        hint="run scoregate from your project directory, or pass --project PATH",
    )


def read_project(root: Path, kinds: EvaluatorKinds) -> Project:
    """Read and validate every project file, evaluator files as `kinds` say; raise ValidationFailed listing all
    problems at once (`scoregate.tracks.project.load_project` passes every kind)."""
    problems: list[str] = []
    loaded_config = load_model(root / CONFIG_FILE, _CONFIG)
    config = loaded_config[0]
    problems.extend(loaded_config[1])
    if config is not None:  # every command that reads the project masks its models' keys
        register_secret_env(spec.api_key_env for spec in config.models.values())
    project = Project(root=root, config=config if config is not None else ProjectConfig(), kinds=kinds)
    _load_named(root / "prompts", "prompt", _PROMPT, project, problems)
    _load_named(root / "evaluators", "evaluator", kinds.adapter, project, problems)
    _load_datasets(root / "datasets", project, problems)
    if problems:
        raise ValidationFailed(problems, hint="fix the files above, then run `scoregate validate`")
    return project


def configured_local_port(root: Path) -> int | None:
    """The project's `settings.local_port` from scoregate.yaml (None when unset or there is no scoregate.yaml)."""
    if not (root / CONFIG_FILE).is_file():
        return None
    loaded = load_model(root / CONFIG_FILE, _CONFIG)
    if loaded[1]:
        raise ValidationFailed(loaded[1], hint="fix scoregate.yaml (`scoregate validate` lists every problem)")
    return loaded[0].settings.local_port if loaded[0] is not None else None


def _load_named(directory: Path, kind: str, adapter: TypeAdapter[Any], project: Project, problems: list[str]) -> None:
    if not directory.is_dir():
        return
    target = project.prompts if kind == "prompt" else project.evaluators
    for path in sorted(directory.glob("*.yaml")):
        spec, found = load_model(path, adapter)
        problems.extend(found)
        if spec is None:
            continue
        if (problem := name_problem(spec.name)) is not None:
            problems.append(f"{path}: name: {problem}")
            continue
        if spec.name != path.stem:
            problems.append(f"{path}: name: is {spec.name!r} but the file is {path.name}; make them the same")
            continue
        if kind == "prompt" and spec.config.response_format is not None:
            problems.extend(schema_problems(path, "config.response_format.schema", spec.config.response_format.schema_))
        target[spec.name] = spec
        project.sources[f"{kind}:{spec.name}"] = path


def schema_problems(path: Path, field_name: str, schema: dict[str, Any] | None) -> list[str]:
    """Return `file: field: invalid JSON Schema ...` when `schema` is not a valid JSON Schema (draft 2020-12)."""
    if schema is None:
        return []
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        at = "/".join(str(p) for p in exc.path)
        keyword = f"`{exc.path[-1]}`" if exc.path else f"`{exc.validator}`"
        return [f"{path}: {field_name}: invalid JSON Schema at {at or '(top)'} (keyword {keyword}): {exc.message}"]
    return []


def _not_a_file(path: Path) -> str | None:
    """Why an existing path is not a readable regular file (a folder, a broken or looping link...), or None."""
    if not os.path.lexists(path) or path.is_file():
        return None
    if path.is_dir():
        return "is a folder, not a file"
    if path.is_symlink():
        return "is a link to nothing (broken, or a loop)"
    return "is not a regular file"


def _load_datasets(directory: Path, project: Project, problems: list[str]) -> None:
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*.jsonl")):
        meta_path = path.with_suffix(".yaml")
        meta = DatasetMeta()
        odd = [p for p in (path, meta_path) if _not_a_file(p)]
        problems += [
            f"{p}: {_not_a_file(p)}; dataset files must be regular files (replace or remove this one)" for p in odd
        ]
        if odd:
            continue
        if meta_path.is_file():
            loaded_meta = load_model(meta_path, _DATASET_META)
            problems.extend(loaded_meta[1])
            meta = loaded_meta[0] or meta
            for key in ("input_schema", "expected_output_schema"):
                problems.extend(schema_problems(meta_path, key, getattr(meta, key)))
        project.datasets[path.stem] = DatasetRef(
            name=path.stem, path=path, meta=meta, meta_path=meta_path if meta_path.is_file() else None
        )
        project.sources[f"dataset:{path.stem}"] = path
    for meta_path in sorted(directory.glob("*.yaml")):
        if not os.path.lexists(meta_path.with_suffix(".jsonl")):
            problems.append(f"{meta_path}: no {meta_path.stem}.jsonl beside it; add the data file or remove this one")
