"""The start step of a run with a cascade judge: each first judge gets the threshold saved for it, or none."""

from __future__ import annotations

import dataclasses

from scoregate.app.run.starting_run import StartingRun
from scoregate.catalog.evaluators import EvaluatorSpec
from scoregate.support.terminal_text import print_wrapped


def cascade_step(run: StartingRun) -> None:
    """Give each cascade judge of the plan its saved threshold when it is bound to the judge as it is now, and say
    which: without one the strong judge scores every item (the first judge still answers, for a calibration)."""
    plan = run.planned
    if not any(_cascade(spec) for spec in _all_specs(plan.evaluators, plan.stage_evaluators)):
        return
    from scoregate.app.cascade import saved_threshold
    from scoregate.scoring.kinds.llm_judge import as_llm_judge, with_threshold

    lines: list[str] = []

    def thresholded(specs: dict[str, EvaluatorSpec]) -> dict[str, EvaluatorSpec]:
        out: dict[str, EvaluatorSpec] = {}
        for name, spec in specs.items():
            judge = as_llm_judge(spec)
            if judge is None or judge.cascade is None:
                out[name] = spec
                continue
            threshold, line = saved_threshold(run.project, judge, plan.judge_model_name)
            if line not in lines:
                lines.append(line)
            out[name] = with_threshold(judge, threshold)
        return out

    run.plan = dataclasses.replace(
        plan,
        evaluators=thresholded(plan.evaluators),
        stage_evaluators={stage: thresholded(specs) for stage, specs in plan.stage_evaluators.items()},
    )
    for line in lines:
        print_wrapped(run.output, line, first="cascade ", indent="  ")


def _all_specs(
    evaluators: dict[str, EvaluatorSpec], stages: dict[str, dict[str, EvaluatorSpec]]
) -> list[EvaluatorSpec]:
    return [*evaluators.values(), *(spec for specs in stages.values() for spec in specs.values())]


def _cascade(spec: EvaluatorSpec) -> bool:
    return getattr(spec, "cascade", None) is not None
