"""`scoregate validate`: every project file, and every model's provider and options, checked without a model call."""

from __future__ import annotations

from scoregate.catalog.plan import CheckedLine, validate_project
from scoregate.catalog.project import Project
from scoregate.errors import ValidationFailed
from scoregate.providers.registry import models_problems


def validate(project: Project) -> list[CheckedLine]:
    """Return a (status, line) per checked thing; raise ValidationFailed listing every problem, the models' first."""
    problems = models_problems(project.config.models)
    try:
        lines = validate_project(project)
    except ValidationFailed as exc:
        raise ValidationFailed([*problems, *exc.problems], hint=exc.hint) from None
    if problems:
        raise ValidationFailed(problems, hint="fix the models in scoregate.yaml")
    return lines
