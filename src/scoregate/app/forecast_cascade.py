"""A cascade judge in a run's forecast: its first judge asked `samples` times on every item, its strong judge on the
share of items the saved threshold does not keep (the share the calibration kept), or on every item, an upper
bound, where no saved threshold holds."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from scoregate.catalog.plan import ExperimentPlan
from scoregate.catalog.project import Project
from scoregate.scoring.kinds.llm_judge import as_llm_judge

UPPER_BOUND = "upper bound: the strong judge on every item"


@dataclass(frozen=True)
class CascadeForecast:
    """How a cascade judge's calls are forecast: the share its first judge is expected to keep, and why."""

    evaluator: str
    first_model: str
    strong_model: str
    samples: int
    share_kept: float | None
    """The share of the calibration's labelled items the saved threshold keeps (None: no saved threshold holds)."""
    basis: str
    """`expected: ...` from the saved threshold, or `upper bound: ...` and why."""
    items: int = 0
    first_calls: int = 0
    strong_calls: int = 0

    def strong_calls_for(self, items: int) -> int:
        """The strong judge's calls over `items` item runs: (1 − kept share) × items, or every item."""
        return items if self.share_kept is None else round(items * (1 - self.share_kept))

    def counted(self, items: int) -> CascadeForecast:
        """This forecast with its calls over `items` item runs."""
        from dataclasses import replace

        return replace(self, items=items, first_calls=self.samples * items, strong_calls=self.strong_calls_for(items))

    def to_dict(self) -> dict[str, Any]:
        """The cascade's forecast as JSON."""
        return asdict(self)


def cascade_forecasts(project: Project, plan: ExperimentPlan) -> dict[str, CascadeForecast]:
    """Per cascade judge of the plan (its stages' too), how its calls are forecast."""
    from scoregate.app.cascade import saved_cascade

    specs = [*plan.evaluators.values(), *(s for stage in plan.stage_evaluators.values() for s in stage.values())]
    found: dict[str, CascadeForecast] = {}
    for spec in specs:
        judge = as_llm_judge(spec)
        if judge is None or judge.cascade is None:
            continue
        saved = saved_cascade(project, judge, plan.judge_model_name)
        strong = judge.models_called(plan.judge_model_name)[0]
        share = saved.share_kept if saved.threshold is not None else None
        if share is None:
            basis = f"{UPPER_BOUND}: {saved.reason}"
        else:
            basis = (
                f"expected: the strong judge on {1 - share:.0%} of the items (the saved threshold keeps {share:.0%} "
                f"of its {saved.labels} calibration labels)"
            )
        found[judge.name] = CascadeForecast(
            judge.name, judge.cascade.first_model, strong, judge.cascade.samples, share, basis
        )
    return found
