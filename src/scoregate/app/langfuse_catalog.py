"""The project's files kept in Langfuse: score configs, dashboards, datasets, prompts (`langfuse setup`, `… sync`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scoregate.integrations.langfuse.dashboards_sync import DashboardSyncReport
    from scoregate.integrations.langfuse.datasets_sync import DatasetSyncReport
    from scoregate.integrations.langfuse.prompts_sync import PromptPlan as PromptPlan  # a report's part, by type
    from scoregate.integrations.langfuse.prompts_sync import PromptSyncReport
    from scoregate.integrations.langfuse.score_configs import ScoreConfigReport
    from scoregate.tracks.project import Project


class LangfuseCatalog:
    """What of the project at `root` lives in Langfuse too, each kind synced by name (idempotent)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @staticmethod
    def configured() -> bool:
        """True when the environment names a Langfuse server and its keys."""
        from scoregate.integrations.langfuse.client import LangfuseSettings

        return LangfuseSettings.from_env() is not None

    @cached_property
    def project(self) -> Project:
        """The project's files, loaded once."""
        from scoregate.tracks.project import load_project

        return load_project(self.root)

    def sync_score_configs(self, *, dry_run: bool = False) -> ScoreConfigReport:
        """Create or update one Langfuse score config per score key of the project's evaluator files."""
        from scoregate.integrations.langfuse.score_configs import setup_score_configs

        return setup_score_configs(self.project, dry_run=dry_run)

    def sync_dashboards(
        self, names: Sequence[str] = (), *, dry_run: bool = False, prune: bool = False
    ) -> DashboardSyncReport:
        """Create or update each dashboard of the project's dashboards/ (or those named) and its widgets by name."""
        from scoregate.integrations.langfuse.dashboards_sync import sync_dashboards

        return sync_dashboards(self.project, names, dry_run=dry_run, prune=prune)

    def sync_datasets(
        self, names: Sequence[str] = (), *, dry_run: bool = False, prune: bool = False
    ) -> DatasetSyncReport:
        """Create missing datasets, upsert changed items, archive removed ones (`prune`) of the project's datasets/."""
        from scoregate.integrations.langfuse.datasets_sync import sync_datasets

        return sync_datasets(self.project, names, dry_run=dry_run, prune=prune)

    def sync_prompts(
        self, names: Sequence[str] = (), *, label: Sequence[str] = (), dry_run: bool = False
    ) -> PromptSyncReport:
        """Create a Langfuse version of each changed prompt of the project's prompts/ (never labelled production)."""
        from scoregate.integrations.langfuse.prompts_sync import sync_prompts

        return sync_prompts(self.project, names, label=label, dry_run=dry_run)
