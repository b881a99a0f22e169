"""Which pinned judges decide the gates a promotion rests on, and whether each is still calibrated and undrifted."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from scoregate.app.calibration_runs import calibration_path, judge_change, judge_model, read_calibrations
from scoregate.app.judge_canary import judge_score_key
from scoregate.catalog.models import LlmJudgeSpec
from scoregate.catalog.plan import plan_experiment
from scoregate.catalog.project import Project


@dataclass(frozen=True)
class JudgeCheck:
    """A pinned judge deciding a gate: ok, or the problem that blocks a promotion."""

    judge: str
    gates: list[str]
    problem: str | None
    figures: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form kept in the audit record."""
        return asdict(self)


def _deciding_judges(project: Project, experiment: str) -> dict[str, list[str]]:
    """Pinned judge → the gates of `experiment` whose metric it writes (or whose calibration it is)."""
    spec = project.config.experiments[experiment]
    by_name = {g.name: g for g in project.config.gates}
    found: dict[str, list[str]] = {}
    for judge, pin in project.config.canaries.items():
        evaluator = project.evaluators.get(judge)
        if judge not in spec.evaluators or not isinstance(evaluator, LlmJudgeSpec):
            continue
        keys = {evaluator.score.key, *(f.key for f in evaluator.extra), judge_score_key(project, judge, pin)}
        for name in spec.gates:
            gate = by_name.get(name)
            needs = gate.requires_calibration if gate else None
            if gate and (gate.metric in keys or (needs is not None and needs.evaluator == judge)):
                found.setdefault(judge, []).append(gate.name)
    return found


def _check(project: Project, judge: str, gates: list[str], judge_model_name: str) -> JudgeCheck:
    evaluator = project.evaluators[judge]
    key = judge_score_key(project, judge, project.config.canaries[judge])
    path = calibration_path(project, judge)
    canary = "run `scoregate calibrate --canary`"
    try:
        record = read_calibrations(path)["scores"].get(key) if path.is_file() else None
    except ValueError as exc:
        return JudgeCheck(judge, gates, f"{path} is unreadable ({exc})")
    if not isinstance(record, dict):
        return JudgeCheck(
            judge, gates, f"judge {judge} ({key}) has no calibration; calibrate it with --save, then {canary}"
        )
    model = judge_model(project, evaluator, judge_model_name)
    latest = record.get("canary")
    if isinstance(latest, dict) and judge_change(latest, evaluator, model) is None:
        drift = latest.get("drift") or {}
        figures = {k: drift.get(k) for k in ("metric", "calibrated", "canary", "change", "tolerance", "n_pairs")}
        where = f"canary run {latest.get('run')} of {latest.get('checked_at')}"
        if drift.get("status") == "drifted":
            return JudgeCheck(judge, gates, f"judge {judge} has drifted ({where}): {drift.get('detail')}", figures)
        if drift.get("status") != "ok":
            return JudgeCheck(judge, gates, f"judge {judge}: {drift.get('detail')} ({where})", figures)
        return JudgeCheck(judge, gates, None, figures)
    changed = judge_change(record, evaluator, model)
    if changed is None:
        return JudgeCheck(judge, gates, None)
    newest = latest.get("checked_at") if isinstance(latest, dict) else record.get("calibrated_at")
    return JudgeCheck(
        judge,
        gates,
        f"judge {judge} has no calibration newer than its last change ({changed}; newest: {newest}); {canary}",
    )


def judge_checks(project: Project, experiments: list[str]) -> list[JudgeCheck]:
    """Return a check of each pinned judge that decides a gate of `experiments` (unpinned judges are not checked)."""
    checks: dict[str, JudgeCheck] = {}
    for experiment in experiments:
        judge_model_name = plan_experiment(project, experiment).judge_model_name
        for judge, gates in _deciding_judges(project, experiment).items():
            if judge not in checks:
                checks[judge] = _check(project, judge, [f"{experiment}.{g}" for g in gates], judge_model_name)
    return list(checks.values())
