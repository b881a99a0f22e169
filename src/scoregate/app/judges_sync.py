"""`scoregate judges plan` / `apply`: the project's judge files as Langfuse evaluators (the v2 API)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scoregate.integrations.langfuse.evaluators_sync import JudgeSyncReport


def sync_project_judges(root: Path, names: Sequence[str] = (), *, dry_run: bool = False) -> JudgeSyncReport:
    """Plan each evaluator file of the project against Langfuse's evaluators; unless `dry_run`, create the new
    ones (a changed judge is a new, green evaluator) and patch changed descriptions. Refuses, in one line, a server
    without the v2 evaluator API."""
    from scoregate.integrations.langfuse.client import require_settings
    from scoregate.integrations.langfuse.evaluators_api import EvaluatorsApi
    from scoregate.integrations.langfuse.evaluators_sync import sync_judges
    from scoregate.tracks.project import load_project

    project = load_project(root)
    return sync_judges(project, names, dry_run=dry_run, api=EvaluatorsApi(require_settings()))
