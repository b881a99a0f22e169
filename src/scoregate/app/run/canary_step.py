"""The post-run step of a judge's canary: after a whole run, each pinned judge of it that changed since its last
calibration or canary re-scores its calibration set (`scoregate.app.run.judge_canary`; `canary_on_change`)."""

from __future__ import annotations

from scoregate.app.run.finished_run import FinishedRun

__all__ = ["judge_canary"]


def judge_canary(run: FinishedRun) -> None:
    """Run the canaries of the run's changed judges (their outcome is printed, never raised)."""
    if not run.options.canary_on_change or not run.project.config.canaries:
        return
    from scoregate.app.run.judge_canary import canary_on_change  # the calibration statistics load only here

    canary_on_change(run.project, run.store, run.console)
