"""The judge drift canary: re-score a judge's pinned calibration set, compare its agreement with the stored one.

A judge is pinned to a calibration set under `canaries:` in scoregate.yaml (an experiment that scores
items with human ratings, usually `output_from: expected_output` on gold_v1). `run_canaries` checks
every pin before any model call, runs each experiment (no response cache: a canary must ask the
model again), calibrates the new run with the statistics of `scoregate calibrate`, and measures the
paired change against the stored calibration's per-item scores. The result is kept beside the
calibration in calibrations/<evaluator>.json under `canary`, bound to the judge as it is now.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.analysis.judge_calibration import compute, gold_field
from scoregate.analysis.judge_drift import Drift, judge_drift
from scoregate.app.calibration_runs import (
    _default_scale,
    calibration_path,
    evaluator_fingerprint,
    judge_hashes,
    judge_model,
    read_calibrations,
)
from scoregate.app.calibration_sources import pairs_from_runs
from scoregate.app.run.canary_score_key import judge_score_key
from scoregate.app.run.judge_gates import judge_calibration_rows
from scoregate.catalog.canaries import CanarySpec
from scoregate.catalog.datasets import iter_items
from scoregate.catalog.plan import plan_experiment
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.scoring.kinds.llm_judge import as_llm_judge
from scoregate.store.run_store import RunStore

if TYPE_CHECKING:
    from rich.console import Console
from scoregate.support.terminal_text import print_wrapped
from scoregate.tracks.project import load_project


@dataclass(frozen=True)
class CanaryResult:
    """One judge's canary: the run that re-scored its set, the new calibration, and the drift from the stored one."""

    judge: str
    score_key: str
    human_key: str
    run_id: str
    calibration: dict[str, Any]
    drift: Drift
    saved_to: Path
    langfuse_definition: str | None = None
    """The definition hash `judges apply` marks the judge's Langfuse evaluator with (`[scoregate judge FILE
    definition HASH]`): the deployed evaluator this figure belongs to; None for a judge that cannot run there."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return {**asdict(self), "drift": self.drift.to_dict(), "saved_to": str(self.saved_to)}


def _pin_problems(project: Project, judge: str, spec: CanarySpec) -> list[str]:
    where = f"{project.config_path}: canaries.{judge}"
    found = project.evaluators.get(judge)
    evaluator = as_llm_judge(found)
    if evaluator is None:
        what = "no evaluator" if found is None else f"evaluator {judge!r} is a {found.kind}, not an llm_judge:"
        return [f"{where}: {what} {judge!r}; a canary watches an LLM judge (evaluators/<name>.yaml)"]
    experiment = project.config.experiments[spec.experiment]
    if judge not in experiment.evaluators:
        return [
            f"{where}.experiment: {spec.experiment!r} does not score with {judge} (its evaluators: "
            f"{', '.join(experiment.evaluators) or 'none'})"
        ]
    if experiment.output_from != "expected_output":
        return [
            f"{where}.experiment: {spec.experiment!r} scores model outputs, but the human ratings of "
            "metadata.human rate each item's expected_output: give it `output_from: expected_output`"
        ]
    dataset = project.datasets.get(experiment.dataset)
    if dataset is None:
        return [f"{where}.experiment: {spec.experiment!r} names no existing dataset ({experiment.dataset!r})"]
    field = gold_field(spec.human_key)
    rated = 0
    for _, item in iter_items(dataset.path):
        human = item.metadata.get("human")
        rated += isinstance(human, dict) and human.get(field) not in (None, "")
    if rated == 0:
        return [
            f"{where}.human_key: no item of {dataset.path} has a human rating {spec.human_key!r} "
            f"(metadata.human.{field}); a canary set needs items rated by people (e.g. gold_v1)"
        ]
    return []


def check_canaries(project: Project, judges: list[str] | None = None) -> dict[str, CanarySpec]:
    """Return the pins to run (all, or `judges`); raise on any bad pin before a model is called."""
    pins = project.config.canaries
    if not pins:
        raise ScoregateError(
            "scoregate.yaml pins no calibration set to a judge",
            where=f"{project.config_path}: canaries",
            hint="add e.g. `canaries: {ev_faithfulness_v1: {experiment: gold_judges, human_key: human_faithfulness}}`",
        )
    unknown = [j for j in judges or [] if j not in pins]
    if unknown:
        raise ScoregateError(
            f"no canary is pinned to {', '.join(unknown)} (pinned: {', '.join(pins)})",
            where=f"{project.config_path}: canaries",
        )
    chosen = {j: pins[j] for j in (judges or pins)}
    problems = [p for judge, spec in chosen.items() for p in _pin_problems(project, judge, spec)]
    if problems:
        raise ScoregateError("\n".join(problems), hint="fix the canaries: block, then rerun")
    return chosen


def _baseline(project: Project, judge: str, key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    path = calibration_path(project, judge)
    how = f"calibrate it first: `scoregate calibrate --run RUN_ID --judge-key {key} --human-key HUMAN_KEY --save`"
    if not path.is_file():
        raise ScoregateError(f"{judge} was never calibrated, so there is nothing to compare a canary with", hint=how)
    try:
        data = read_calibrations(path)
    except ValueError as exc:
        raise ScoregateError(f"unreadable: {exc}", where=str(path), hint="fix or delete the file") from None
    record = data["scores"].get(key)
    if not isinstance(record, dict) or not isinstance(record.get("pairs"), dict):
        raise ScoregateError(
            f"{path} holds no per-item scores of {key} to compare a canary with",
            hint=how + " (a calibration saved before canaries, or pooled over runs, has none)",
        )
    return data, record


def run_canaries(
    root: Path, judges: list[str] | None = None, *, resamples: int | None = None, seed: int | None = None
) -> list[CanaryResult]:
    """Re-score each pinned judge's calibration set and compare its agreement with the stored calibration."""
    from scoregate.app.run.one_run import run_one  # a canary is a run: its machinery loads only for one
    from scoregate.app.run.option_groups import Mirrors, PromptSource
    from scoregate.app.run.run_options import RunOptions
    from scoregate.sinks.registry import sink_names

    project = load_project(root)
    chosen = check_canaries(project, judges)
    baselines = {j: _baseline(project, j, judge_score_key(project, j, s)) for j, s in chosen.items()}
    options = RunOptions(
        use_cache=False,
        mirrors=Mirrors(off=frozenset(sink_names())),
        prompts=PromptSource("local"),
        canary_on_change=False,
    )
    run_ids: dict[str, str] = {}
    for experiment in dict.fromkeys(spec.experiment for spec in chosen.values()):
        run_ids[experiment] = run_one(project, experiment, options).run_id
    settings = project.config.settings
    n_resamples = resamples or settings.bootstrap_resamples
    seed = settings.seed if seed is None else seed
    results = []
    for judge, spec in chosen.items():
        store = RunStore.open(project.root / "runs", run_ids[spec.experiment])
        results.append(_compare(project, judge, spec, store, baselines[judge], n_resamples, seed))
    for experiment, run_id in run_ids.items():
        _record_in_run(project, experiment, RunStore.open(project.root / "runs", run_id))
    return results


def _record_in_run(project: Project, experiment: str, store: RunStore) -> None:
    """Put the canary's drift into the canary run's summary and report (they were written before it was known)."""
    from scoregate.report.write import project_report_options, write_run_report

    summary = store.summary
    if summary is None:
        return
    plan = plan_experiment(project, experiment)
    drift = judge_calibration_rows(project, list(plan.evaluators), plan.judge_model_name)
    store.write_summary({**summary, "judge_drift": drift})
    write_run_report(store, project_report_options(project.root))


def _compare(
    project: Project,
    judge: str,
    spec: CanarySpec,
    store: RunStore,
    baseline: tuple[dict[str, Any], dict[str, Any]],
    resamples: int,
    seed: int,
) -> CanaryResult:
    """Calibrate the canary run like `calibrate`, measure the drift from the stored calibration, keep the result."""
    key = judge_score_key(project, judge, spec)
    pairs = pairs_from_runs([store], project.root, key, spec.human_key)
    scale = _default_scale(project, key)
    report = compute(pairs, key, spec.human_key, scale=scale, resamples=resamples, seed=seed)
    data, record = baseline
    old = record["pairs"]
    new = dict(zip(pairs.items, pairs.judge, strict=True))
    human = dict(zip(pairs.items, pairs.human, strict=True))
    items = [i for i in new if i in old]
    drift = judge_drift(
        [old[i][0] for i in items],
        [new[i] for i in items],
        [human[i] for i in items],
        metric=spec.metric,
        tolerance=spec.tolerance,
        stat=spec.stat,
        scale=scale,
        resamples=resamples,
        seed=seed,
    )
    evaluator = project.evaluators[judge]
    prompt_hash, rubric_hash = judge_hashes(evaluator)
    definition = langfuse_definition(project, judge)
    record["canary"] = {
        "run": store.run_id,
        "langfuse_definition": definition,
        "version": evaluator.version,
        "fingerprint": evaluator_fingerprint(evaluator),
        "prompt_hash": prompt_hash,
        "rubric_hash": rubric_hash,
        "model": judge_model(project, evaluator, plan_experiment(project, spec.experiment).judge_model_name),
        "human_key": spec.human_key,
        "metrics": {"pooled": report.calibration.to_dict()["pooled"]},
        "n_pairs": report.calibration.n_pairs,
        "pairs": {item: [new[item], human[item]] for item in new},  # the set as the judge scores it now
        "drift": drift.to_dict(),
        "checked_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    path = calibration_path(project, judge)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return CanaryResult(judge, key, spec.human_key, store.run_id, report.to_dict(), drift, path, definition)


def langfuse_definition(project: Project, judge: str) -> str | None:
    """The definition hash of the judge as it is now in its Langfuse evaluator's marker, or None when it has none."""
    from scoregate.integrations.langfuse.evaluators_body import JudgeBody
    from scoregate.integrations.langfuse.evaluators_sync import wanted_body

    try:
        body = wanted_body(project, project.evaluators[judge])
    except ScoregateError:  # its model is not in scoregate.yaml: no evaluator body, so no definition
        return None
    return body.definition_hash if isinstance(body, JudgeBody) else None


def canary_on_change(project: Project, store: RunStore, console: Console | None) -> list[CanaryResult]:
    """After a run: re-score the set of each pinned judge of it that changed since its last calibration or canary.

    A failed canary (a bad pin, no calibration to compare with, an unreachable model) is reported, never
    raised: the run it follows is stored and stays valid.
    """
    from rich.console import Console

    receipts = store.manifest_record.receipts
    name = str(receipts.experiment)
    experiment = project.config.experiments.get(name)
    if experiment is None:
        return []
    judge_model_name = str(receipts.judge_model.name if receipts.judge_model else None)
    rows = judge_calibration_rows(project, experiment.evaluators, judge_model_name)
    pins = project.config.canaries
    changed = sorted({
        r["judge"] for r in rows
        if r["judge"] in pins and r["status"] == "changed"
        and r["score_key"] == judge_score_key(project, r["judge"], pins[r["judge"]])
    })  # fmt: skip
    if not changed:
        return []
    out = console or Console(stderr=True)
    for judge in changed:
        print_wrapped(out, f"judge {judge} changed since its last calibration or canary: re-scoring its "
                       f"calibration set (experiment {pins[judge].experiment})")  # fmt: skip
    try:
        results = run_canaries(project.root, changed)
    except ScoregateError as exc:
        print_wrapped(out, f"canary not run: {exc.render()}", style="yellow")
        return []
    for result in results:
        print_wrapped(out, f"canary of {result.judge} ({result.run_id}): {result.drift.status}: {result.drift.detail}")
    _record_in_run(project, name, store)
    return results
