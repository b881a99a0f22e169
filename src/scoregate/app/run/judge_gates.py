"""Which pinned judges decide the gates a promotion rests on, and whether each is still calibrated and undrifted."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from scoregate.app.calibration_runs import calibration_path, judge_change, judge_model, read_calibrations
from scoregate.app.run.canary_score_key import judge_score_key
from scoregate.catalog.plan import plan_experiment
from scoregate.catalog.project import Project
from scoregate.scoring.kinds.llm_judge import as_llm_judge


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
        evaluator = as_llm_judge(project.evaluators.get(judge))
        if judge not in spec.evaluators or evaluator is None:
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


def _row(judge: str, key: str, record: dict[str, Any], evaluator: Any, model: Any) -> dict[str, Any]:
    """One judge score's calibration state as the report shows it: drift of its current canary, or why none."""
    pooled = (record.get("metrics") or {}).get("pooled") or {}
    row: dict[str, Any] = {"judge": judge, "score_key": key, "human_key": record.get("human_key"),
                           "calibrated_at": record.get("calibrated_at"), "checked_at": None, "canary_run": None,
                           "spearman": (pooled.get("spearman") or {}).get("value"), "drift": None}  # fmt: skip
    canary = record.get("canary")
    if isinstance(canary, dict) and judge_change(canary, evaluator, model) is None:
        drift = canary.get("drift") or {}
        row.update(status=drift.get("status"), detail=drift.get("detail"), drift=drift)
        row.update(checked_at=canary.get("checked_at"), canary_run=canary.get("run"))
        row.update(langfuse_definition=canary.get("langfuse_definition"))
        return row
    changed = judge_change(record, evaluator, model)
    if changed is None:
        row.update(status="calibrated", detail="calibrated; no canary of this judge since")
    else:
        row.update(status="changed", detail=f"changed since its calibration: {changed}")
    return row


def judge_calibration_rows(project: Project, evaluators: list[str], judge_model_name: str) -> list[dict[str, Any]]:
    """Return the calibration and drift state of each judge among `evaluators` that has a saved calibration."""
    rows = []
    for name in evaluators:
        evaluator = as_llm_judge(project.evaluators.get(name))
        path = calibration_path(project, name)
        if evaluator is None or not path.is_file():
            continue
        try:
            scores = read_calibrations(path)["scores"]
        except ValueError:
            continue  # a gate requiring the calibration says so; the report shows what it can read
        model = judge_model(project, evaluator, judge_model_name)
        rows += [_row(name, key, rec, evaluator, model) for key, rec in scores.items() if isinstance(rec, dict)]
    return rows
