"""The summary step: aggregate a finished run's stored results, judge its gates (flaky items kept out of
`every_item` gates, slice and regression gates, a judge's calibration), write `summary.json`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scoregate.analysis.consistency import consistency
from scoregate.analysis.gates import GateResult, evaluate_gate, overall_verdict
from scoregate.app.run.run_options import runs_dir
from scoregate.app.run.score_columns import plan_evaluators, score_columns
from scoregate.app.run.stop_early import stop_summary
from scoregate.catalog.config_models import GateSpec
from scoregate.catalog.plan import ExperimentPlan
from scoregate.catalog.project import Project
from scoregate.store.invalidation import with_invalidation
from scoregate.store.repeats import iter_all_results
from scoregate.store.run_store import RunStore
from scoregate.tracks.base import TrackSettings
from scoregate.tracks.registry import take_gate_metrics, track_reports

__all__ = ["summarize_run"]


def _every_item(plan: ExperimentPlan) -> bool:
    return any(g.stat == "every_item" and (g.datasets is None or plan.dataset.name in g.datasets) for g in plan.gates)


def summarize_run(store: RunStore, plan: ExperimentPlan, project: Project) -> dict[str, Any]:
    """Aggregate the stored results, judge the gates, write and return summary.json."""
    from scoregate.analysis.corrected_gates import corrected_gate
    from scoregate.analysis.regression import is_regression_gate
    from scoregate.analysis.summary import RunAggregator
    from scoregate.app.regression_gate import evaluate_regression_gate
    from scoregate.app.run.corrected_metrics import asks_corrected, corrected_blocks, corrected_regression_gate
    from scoregate.app.run.flaky_items import find_flaky, quarantine_hint
    from scoregate.app.run.slice_gates import evaluate_slice_gate

    settings = project.config.settings
    aggregator = RunAggregator(score_columns(plan_evaluators(plan), plan))
    for result in store.iter_results():
        aggregator.add(result)
    summary = aggregator.summary(
        confidence=settings.confidence_level, resamples=settings.bootstrap_resamples, seed=settings.seed
    )
    track_settings = TrackSettings(
        settings.min_coverage, settings.confidence_level, settings.bootstrap_resamples, settings.seed
    )
    tracks = track_reports(plan_evaluators(plan), store, summary, track_settings)
    summary["scores"].update(take_gate_metrics(tracks))  # run-level track metrics (micro values) a gate can name
    for block in tracks.values():  # each label kind a track counts joins the run's coverage block
        summary["coverage"].update({k: v for k, v in (block.get("coverage") or {}).items() if k.startswith("samples_")})
    wanted = {g.metric for g in plan.gates if asks_corrected(g, settings)}

    numeric = {key for key, stats in summary["scores"].items() if stats.get("data_type") in ("numeric", "boolean")}

    def score_column(key: str) -> Sequence[float | None] | None:  # a text or categorical column only marks items
        return aggregator.column(key) if key in numeric and aggregator.has_column(key) else None

    for key, block in corrected_blocks(
        project, plan, score_column, wanted=wanted, confidence=settings.confidence_level
    ).items():
        if key in summary["scores"]:
            summary["scores"][key]["corrected"] = block
    gates: list[GateResult] = []
    flaky = find_flaky(project.config, runs_dir(project), plan.name, current=store) if _every_item(plan) else None
    for gate in plan.gates:
        if gate.datasets is not None and plan.dataset.name not in gate.datasets:
            continue
        if is_regression_gate(gate) and asks_corrected(gate, settings):
            gates.append(corrected_regression_gate(
                gate, store, project, plan, min_coverage=settings.min_coverage, confidence=settings.confidence_level,
            ))  # fmt: skip
            continue
        if is_regression_gate(gate):
            gates.append(
                (evaluate_slice_gate if gate.slices else evaluate_regression_gate)(
                    gate, store, project_root=project.root, runs_dir=runs_dir(project),
                    min_coverage=settings.min_coverage, confidence=settings.confidence_level,
                    resamples=settings.bootstrap_resamples, seed=settings.seed,
                )
            )  # fmt: skip
            continue
        column = aggregator.column(gate.metric) if aggregator.has_column(gate.metric) else None
        leave_out = flaky.kept_out(gate.name) if flaky is not None and gate.stat == "every_item" else set()
        verdict = evaluate_gate(
            gate, summary, column=column, min_coverage=settings.min_coverage, item_ids=aggregator.item_ids,
            quarantined=leave_out, quarantine_hint=quarantine_hint(plan.name),
        )  # fmt: skip
        if asks_corrected(gate, settings):
            verdict = corrected_gate(verdict, gate, summary["scores"].get(gate.metric, {}).get("corrected"))
        gates.append(_with_calibration(verdict, gate, project, plan))
    manifest = store.manifest_record
    summary = {
        "run_id": store.run_id,
        "experiment": plan.name,
        "dataset": plan.dataset.name,
        "prompts": manifest.receipts.prompt_versions(),
        "model": plan.model_name,
        **summary,
        "gates": [g.to_dict() for g in gates],
        "verdict": overall_verdict(gates),
    }
    summary.update(tracks)
    if flaky is not None:
        summary["flaky"] = flaky.to_dict()
    from scoregate.app.run.judge_gates import judge_calibration_rows

    if judges := judge_calibration_rows(project, list(plan.evaluators), plan.judge_model_name):
        summary["judge_drift"] = judges
    if plan.spec.stages:
        from scoregate.analysis.stage_summary import stage_summary

        summary["stages"] = stage_summary(store.iter_results(), [stage.name for stage in plan.spec.stages])
    from scoregate.app.run.cascade_report import cascade_blocks

    if cascades := cascade_blocks(store, plan, project):
        summary["cascade"] = cascades
    repeats = manifest.options.repeat
    if repeats > 1:
        summary["repeats"] = consistency(iter_all_results(store), repeats, score_columns(plan_evaluators(plan), plan))
    if (stopped := stop_summary(store)) is not None:
        summary["stop_early"] = stopped
    summary = with_invalidation(store, summary)  # a run invalidated before it finished stays invalid
    store.write_summary(summary)
    return summary


def _with_calibration(result: GateResult, gate: GateSpec, project: Project, plan: ExperimentPlan) -> GateResult:
    """A gate that requires a calibrated judge takes the calibration's status unless it already failed."""
    need = gate.requires_calibration
    if need is None or result.status == "fail":
        return result
    from scoregate.app.calibration_runs import calibration_status

    status, detail = calibration_status(
        project, need.evaluator, plan.judge_model_name, floor=need.floor, metric=need.metric,
        score_key=need.score_key, stat=need.stat, min_pairs=need.min_pairs,
    )  # fmt: skip
    if status == "pass":
        return result.model_copy(update={"detail": f"{result.detail}; judge calibrated: {detail}"})
    return result.model_copy(update={"status": status, "detail": f"judge calibration {status}: {detail}"})
