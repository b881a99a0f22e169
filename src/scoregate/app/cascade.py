"""A cascade judge calibrated on stored runs: the first judge's threshold, its guarantee, the share it keeps and
the cost it saves; saved bound to the judge (`calibrations/<evaluator>.cascade.json`), read back by each run.

The runs are runs of the cascade judge over human-labelled items (its canary experiment, say): every such run
writes the first judge's answer and confidence beside the strong judge's score, and its telemetry holds what each
judge's calls cost. Agreement of an answer with a human rating: within `cascade.tolerance` (0.5 for a numeric
score, so a 4 agrees with a human mean of 3.67 to 4.33; 0 for a boolean one).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoregate import __version__
from scoregate.analysis.cascade import CascadeChoice, CascadeCost, agrees, cascade_cost, choose_threshold
from scoregate.app.calibration_runs import (
    calibration_path,
    evaluator_fingerprint,
    judge_change,
    judge_identity,
    judge_model,
)
from scoregate.app.calibration_sources import pairs_from_runs
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError, UsageError
from scoregate.scoring.kinds.llm_judge import JudgeCascade, LlmJudgeSpec, as_llm_judge
from scoregate.store.repeats import iter_all_results
from scoregate.store.run_store import RunStore
from scoregate.support.files import replace_atomically

SUFFIX = ".cascade.json"


@dataclass(frozen=True)
class CascadeCalibration:
    """A cascade judge's threshold chosen on stored runs, and what it means for agreement and cost."""

    evaluator: str
    score_key: str
    human_key: str
    runs: list[str]
    first_model: str
    strong_model: str
    tolerance: float
    choice: CascadeChoice
    first_agreement: float | None
    """The first judge's agreement with humans on every labelled item (what keeping all of it would give)."""
    strong_agreement: float | None
    """The strong judge's on the same items."""
    cost: CascadeCost
    excluded: dict[str, int]
    saved_to: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        data = asdict(self)
        data["saved_to"] = str(self.saved_to) if self.saved_to else None
        data["choice"]["share_kept"] = self.choice.share_kept
        data["choice"]["guarantee"] = self.choice.guarantee
        return data


def cascade_of(project: Project, evaluator: str) -> tuple[LlmJudgeSpec, JudgeCascade]:
    """The judge file of `evaluator` and its `cascade:`; a usage error naming the file when it has none."""
    spec = as_llm_judge(project.evaluators.get(evaluator))
    if spec is None:
        known = sorted(n for n, s in project.evaluators.items() if (j := as_llm_judge(s)) and j.cascade)
        raise UsageError(
            f"{evaluator!r} is not a judge with `cascade:`",
            hint=f"cascade judges in evaluators/: {', '.join(known) or 'none (add cascade: to a judge file)'}",
        )
    if spec.cascade is None:
        raise UsageError(
            f"{project.source('evaluator', evaluator)} has no `cascade:`",
            hint="add cascade: {first_model: MODEL, target: 0.8} (docs/results/judge-cascade.md)",
        )
    return spec, spec.cascade


def tolerance_of(spec: LlmJudgeSpec) -> float:
    """How far a judge's answer may be from a human rating and still agree."""
    assert spec.cascade is not None
    if spec.cascade.tolerance is not None:
        return spec.cascade.tolerance
    return 0.0 if spec.score.data_type == "boolean" else 0.5


def calibrate_cascade(
    project: Project, evaluator: str, runs: Sequence[str], *, human_key: str | None = None, save: bool = False
) -> CascadeCalibration:
    """Choose the first judge's threshold on stored runs of the cascade judge; `save` binds it to the judge."""
    spec, cascade = cascade_of(project, evaluator)
    if not runs:
        raise UsageError("name at least one run: scoregate cascade EVALUATOR --run RUN_ID", option="--run")
    canary = project.config.canaries.get(evaluator)
    human_key = human_key or (canary.human_key if canary else None)
    if not human_key:
        raise UsageError(f"name the human rating: --human-key KEY ({evaluator} has no canary)", option="--human-key")
    stores = [RunStore.open(project.root / "runs", run_id) for run_id in dict.fromkeys(runs)]
    first_key, confidence_key = spec.cascade_keys()
    score_key = spec.score.key
    pairs = pairs_from_runs(stores, project.root, first_key, human_key)
    identity = judge_identity(project, stores, score_key)
    strong_name = str((identity.model or {}).get("name"))
    tolerance = tolerance_of(spec)
    confidences: list[float] = []
    agreement: list[bool] = []
    strong_agree: list[bool] = []
    costs = {"first": 0.0, "strong": 0.0}
    priced = True
    strong_items = 0
    index = 0
    for store in stores:
        for result in store.iter_results():
            first, human = pairs.judge[index], pairs.human[index]
            index += 1
            if first is None or human is None:
                continue
            confidence = result.score(confidence_key)
            strong = result.score(score_key)
            confidences.append(float(confidence.value) if confidence and confidence.value is not None else 0.0)
            agreement.append(agrees(first, human, tolerance))
            judged = [c for c in result.calls if c.purpose == f"judge:{evaluator}"]
            strong_calls = [c for c in judged if c.model_name != cascade.first_model]
            strong_items += bool(strong_calls)
            if strong_calls and strong is not None and isinstance(strong.value, int | float):
                strong_agree.append(agrees(float(strong.value), human, tolerance))
            for call in judged:
                priced = priced and call.cost_usd is not None
                costs["first" if call.model_name == cascade.first_model else "strong"] += call.cost_usd or 0.0
    choice = choose_threshold(confidences, agreement, target=cascade.target, delta=cascade.delta)
    cost = cascade_cost(
        items=len(confidences),
        kept=choice.kept,
        first_cost=costs["first"] if priced else None,
        strong_cost=costs["strong"] if priced else None,
        strong_items=strong_items,
    )
    calibration = CascadeCalibration(
        evaluator=evaluator,
        score_key=score_key,
        human_key=human_key,
        runs=[s.run_id for s in stores],
        first_model=cascade.first_model,
        strong_model=strong_name,
        tolerance=tolerance,
        choice=choice,
        first_agreement=_share(agreement),
        strong_agreement=_share(strong_agree),
        cost=cost,
        excluded=dict(Counter(pairs.excluded)),
    )
    if not save:
        return calibration
    path = _save(project, spec, calibration, asdict(identity))
    return CascadeCalibration(**{**calibration.__dict__, "saved_to": path})


@dataclass(frozen=True)
class SavedCascade:
    """The threshold saved for a cascade judge as it is now (None: none holds, `line` says why) and what the
    calibration measured with it."""

    threshold: float | None
    line: str
    """What the run says at its start: the threshold and its guarantee, or why there is none."""
    reason: str | None = None
    """Why there is no threshold (None: there is one)."""
    share_kept: float | None = None
    """The share of the calibration's labelled items the first judge keeps at the threshold."""
    labels: int | None = None
    strong_cost_per_item: float | None = None
    """What the strong judge cost per item on the calibration's runs (None: unpriced or unknown)."""
    runs: tuple[str, ...] = ()
    """The runs the calibration read."""


def saved_cascade(project: Project, spec: LlmJudgeSpec, default_judge: str) -> SavedCascade:
    """The cascade calibration saved for this judge, when it is bound to the judge as it is now (else why not)."""
    path = cascade_path(project, spec.name)
    how = f"run the judge over human-labelled items, then `scoregate cascade {spec.name} --run RUN_ID --save`"
    if not path.is_file():
        why = f"no cascade calibration ({how})"
        return SavedCascade(None, f"{spec.name}: {why}; the strong judge scores every item", why)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        judge = record["judge"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ScoregateError(f"cannot read it: {exc}", where=str(path), hint="fix or delete the file") from None
    changed = judge_change(judge, spec, judge_model(project, spec, default_judge))
    assert spec.cascade is not None
    first = _model(project, spec.cascade.first_model)
    if changed is None and record.get("first_model") != first:
        changed = f"its first judge is {first} but was calibrated with {record.get('first_model')}"
    if changed is not None:
        why = f"the cascade calibration no longer holds: {changed} ({how})"
        return SavedCascade(None, f"{spec.name}: {why}; the strong judge scores every item", why)
    threshold, labels = record.get("threshold"), record.get("labels")
    if threshold is None:
        return SavedCascade(None, f"{spec.name}: {record.get('reason')}", str(record.get("reason")), None, labels)
    share = float(record.get("share_kept") or 0.0)
    line = (
        f"{spec.name}: the first judge {spec.cascade.first_model} keeps items at confidence >= {threshold:g} "
        f"({record.get('guarantee')}, {share:.0%} kept on {labels} labels)"
    )
    per_item = record.get("strong_cost_per_item")
    runs = tuple(str(r) for r in record.get("runs") or ())
    return SavedCascade(float(threshold), line, None, share, labels, per_item, runs)


def saved_threshold(project: Project, spec: LlmJudgeSpec, default_judge: str) -> tuple[float | None, str]:
    """The threshold saved for this judge as it is now (None, and why, when there is none that holds)."""
    saved = saved_cascade(project, spec, default_judge)
    return saved.threshold, saved.line


def cascade_path(project: Project, evaluator: str) -> Path:
    """Where the cascade calibration of `evaluator` is kept, beside its calibrations."""
    return calibration_path(project, evaluator).with_suffix(SUFFIX)


def _save(project: Project, spec: LlmJudgeSpec, calibration: CascadeCalibration, judge: dict[str, Any]) -> Path:
    assert spec.cascade is not None
    choice = calibration.choice
    record = {
        "evaluator": spec.name,
        "judge": {**judge, "fingerprint": evaluator_fingerprint(spec)},
        "first_model": _model(project, spec.cascade.first_model),
        "threshold": choice.threshold,
        "reason": choice.reason,
        "guarantee": choice.guarantee,
        "target": choice.target,
        "delta": choice.delta,
        "labels": choice.labels,
        "share_kept": choice.share_kept,
        "kept_agreement": choice.kept_agreement,
        "human_key": calibration.human_key,
        "runs": calibration.runs,
        "strong_cost_per_item": calibration.cost.strong_per_item,
        "calibrated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "tool_version": __version__,
    }
    path = cascade_path(project, spec.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replace_atomically(path) as out:
        out.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return path


def _model(project: Project, name: str) -> dict[str, str | None]:
    model = project.config.models.get(name)
    return {"name": name, "provider": model.provider if model else None, "model": model.model if model else None}


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def escalated_items(project: Project, store: RunStore, evaluator: str) -> set[str]:
    """The ids of the run's items the cascade judge `evaluator` sent to its strong judge (every item it scored when
    no threshold held)."""
    _, cascade = cascade_of(project, evaluator)
    purpose = f"judge:{evaluator}"
    return {
        result.item_id
        for result in iter_all_results(store)
        if any(c.purpose == purpose and c.model_name != cascade.first_model for c in result.calls)
    }


def calibrate_stored_cascade(
    root: Path, evaluator: str, runs: Sequence[str], *, human_key: str | None = None, save: bool = False
) -> CascadeCalibration:
    """`calibrate_cascade` for the project at `root` (the `scoregate cascade` entry point)."""
    from scoregate.tracks.project import load_project

    return calibrate_cascade(load_project(root), evaluator, runs, human_key=human_key, save=save)
