"""`scoregate plan EXPERIMENT --labels N --judge-key K --human-key H`: which N human labels, judged pass or judged
fail, shorten the corrected pass rate's interval most, and the items to label (`annotate queue RUN --labels N`
sends exactly those). The numbers: `scoregate.analysis.label_allocation`."""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scoregate.analysis.judge_calibration import FeedbackIndex, ScorePairs, add_run_items
from scoregate.analysis.label_allocation import Corrected, LabelPlan, allocate, corrected, judged_classes
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError, UsageError
from scoregate.store.feedback import TRACE_LINKS_KEY, load_feedback
from scoregate.store.run_store import RunStore
from scoregate.store.valid_runs import valid_runs


@dataclass(frozen=True)
class LabelRequest:
    """How many more human labels to plan, for which pass/fail judge score and human rating."""

    labels: int
    judge_key: str
    human_key: str
    pass_at: float | None = None
    """An item passes when its score is at least this (judge and human alike); None: the scores are 0/1."""
    seed: int = 0

    def __post_init__(self) -> None:
        if self.labels < 1:
            raise UsageError(f"--labels {self.labels}: plan at least 1 label", option="--labels")
        for option, key in (("--judge-key", self.judge_key), ("--human-key", self.human_key)):
            if not key:
                raise UsageError(f"{option} is needed with --labels: name the pass/fail score", option=option)
        if self.pass_at is not None and not math.isfinite(self.pass_at):
            raise UsageError(
                f"--pass-at {self.pass_at:g}: a finite score where a pass starts is needed, e.g. --pass-at 4",
                option="--pass-at",
            )


@dataclass(frozen=True)
class LabelPlanReport:
    """The run's judged classes and labels, the corrected pass rate now, the plan, and the items to label."""

    run_id: str
    judge_key: str
    human_key: str
    pass_at: float | None
    items: int
    judged_pass_share: float
    labelled: dict[str, int]
    corrected: Corrected
    plan: LabelPlan
    chosen: dict[str, list[str]]
    """`judged pass` / `judged fail` → the unlabelled item ids to send for a human label."""

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON."""
        return asdict(self)


def _verdicts(values: list[float | None], option: str, key: str, pass_at: float | None) -> list[float | None]:
    """Each value as a verdict, 1 pass or 0 fail (None stays None)."""
    if pass_at is not None:
        return [None if v is None else float(v >= pass_at) for v in values]
    odd = sorted({v for v in values if v is not None and v not in (0.0, 1.0)})
    if odd:
        raise UsageError(
            f"{option} {key}: a pass/fail score (0 or 1) is needed, and it has {odd[0]:g}",
            option=option,
            hint="say where a pass starts with --pass-at, e.g. --pass-at 4",
        )
    return values


def plan_labels_for(project: Project, store: RunStore, request: LabelRequest) -> LabelPlanReport:
    """Plan `request.labels` more human labels for the judge score of one stored run."""
    pairs = ScorePairs(source=f"run {store.run_id}")
    feedback = FeedbackIndex(load_feedback(project.root).values())
    traces: dict[str, str] = store.links.get(TRACE_LINKS_KEY) or {}
    add_run_items(pairs, store.run_id, store.iter_results(), traces, request.judge_key, request.human_key, feedback)
    judge = _verdicts(pairs.judge, "--judge-key", request.judge_key, request.pass_at)
    human = _verdicts(pairs.human, "--human-key", request.human_key, request.pass_at)
    measured = [(item, j, h) for item, j, h in zip(pairs.items, judge, human, strict=True) if j is not None]
    if not measured:
        raise ScoregateError(f"run {store.run_id} has no measured {request.judge_key}")
    passed, failed = judged_classes([j for _, j, _ in measured], [h for _, _, h in measured])
    plan = allocate(passed, failed, len(measured), request.labels)
    rng = random.Random(request.seed)
    chosen = {}
    for name, verdict, count in (("judged pass", 1.0, plan.judged_pass), ("judged fail", 0.0, plan.judged_fail)):
        pool = [item for item, j, h in measured if j == verdict and h is None]
        chosen[name] = sorted(rng.sample(pool, min(count, len(pool))))
    return LabelPlanReport(
        run_id=store.run_id,
        judge_key=request.judge_key,
        human_key=request.human_key,
        pass_at=request.pass_at,
        items=len(measured),
        judged_pass_share=passed.weight,
        labelled={"judged pass": passed.labelled, "judged fail": failed.labelled},
        corrected=corrected(passed, failed, len(measured)),
        plan=plan,
        chosen=chosen,
    )


def plan_labels(project: Project, experiment: str, request: LabelRequest) -> LabelPlanReport:
    """`plan_labels_for` the experiment's latest valid run."""
    runs, _ = valid_runs(project.root / "runs", experiment=experiment)
    if not runs:
        raise ScoregateError(
            f"{experiment} has no finished valid run to plan labels for",
            hint=f"run it once: `scoregate run {experiment}`",
        )
    return plan_labels_for(project, runs[0][0], request)


def plan_stored_labels(root: Path, experiment: str, request: LabelRequest) -> LabelPlanReport:
    """`plan_labels` for the project at `root` (the `scoregate plan --labels` entry point)."""
    from scoregate.tracks.project import load_project

    return plan_labels(load_project(root), experiment, request)
