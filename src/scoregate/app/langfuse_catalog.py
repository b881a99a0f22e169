"""The project's files kept in Langfuse: score configs, dashboards, datasets, prompts (`langfuse setup`, `… sync`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scoregate.integrations.langfuse.dashboards_sync import DashboardSyncReport
    from scoregate.integrations.langfuse.datasets_sync import DatasetSyncReport
    from scoregate.integrations.langfuse.prompts_sync import PromptPlan as PromptPlan  # a report's part, by type
    from scoregate.integrations.langfuse.prompts_sync import PromptSyncReport
    from scoregate.integrations.langfuse.score_configs import ScoreConfigReport


def langfuse_configured() -> bool:
    """True when the environment names a Langfuse server and its keys."""
    from scoregate.integrations.langfuse.client import LangfuseSettings

    return LangfuseSettings.from_env() is not None


def sync_score_configs(root: Path, *, dry_run: bool = False) -> ScoreConfigReport:
    """Create or update one Langfuse score config per score key of the project's evaluator files (idempotent)."""
    from scoregate.integrations.langfuse.score_configs import setup_score_configs
    from scoregate.tracks.project import load_project

    return setup_score_configs(load_project(root), dry_run=dry_run)


def sync_project_dashboards(
    root: Path, names: Sequence[str] = (), *, dry_run: bool = False, prune: bool = False
) -> DashboardSyncReport:
    """Create or update each dashboard of the project's dashboards/ (or those named) and its widgets by name."""
    from scoregate.integrations.langfuse.dashboards_sync import sync_dashboards
    from scoregate.tracks.project import load_project

    return sync_dashboards(load_project(root), names, dry_run=dry_run, prune=prune)


def sync_project_datasets(
    root: Path, names: Sequence[str] = (), *, dry_run: bool = False, prune: bool = False
) -> DatasetSyncReport:
    """Create missing datasets, upsert changed items, archive removed ones (`prune`) of the project's datasets/."""
    from scoregate.integrations.langfuse.datasets_sync import sync_datasets
    from scoregate.tracks.project import load_project

    return sync_datasets(load_project(root), names, dry_run=dry_run, prune=prune)


def sync_project_prompts(
    root: Path, names: Sequence[str] = (), *, label: Sequence[str] = (), dry_run: bool = False
) -> PromptSyncReport:
    """Create a Langfuse version of each changed prompt of the project's prompts/ (never labelled production)."""
    from scoregate.integrations.langfuse.prompts_sync import sync_prompts
    from scoregate.tracks.project import load_project

    return sync_prompts(load_project(root), names, label=label, dry_run=dry_run)
