"""`settings.budget` of scoregate.yaml: the default budget of every run (`run --budget-usd/--budget-minutes` win)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class BudgetSettings(BaseModel):
    """A run refuses to start when its forecast's upper end exceeds a budget, and stops (resumable) at it."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    usd: float | None = Field(default=None, gt=0, description="Most USD one run (or one resume) may spend.")
    minutes: float | None = Field(default=None, gt=0, description="Most minutes one run (or one resume) may take.")
