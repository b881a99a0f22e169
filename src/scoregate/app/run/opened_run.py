"""What opening a run found (`OpenedRun`): the way a run is run (`run_way`) opens it before its start steps."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from scoregate.app.run.run_options import RunOptions
    from scoregate.catalog.plan import ExperimentPlan
    from scoregate.store.run_store import RunStore

__all__ = ["OpenedRun"]


class OpenedRun(NamedTuple):
    """What opening a run found: its options, the stored run it resumes, and the plan if opening needed one."""

    options: RunOptions
    resumed: RunStore | None
    plan: ExperimentPlan | None = None
