"""Calibrations of a project's judges: computed from stored runs, saved bound to the judge, checked by gates.

A saved calibration (`calibrations/<evaluator>.json`, one record per score key) holds the judge's
identity — evaluator version, a fingerprint of its spec (prompt, rubric, scale, sampling), the file
hash, and the judge model's provider and model id — beside the agreement metrics. A gate asks
`calibration_status`: pass or fail against a floor while that identity still holds, incomplete when
there is no calibration or the judge changed since (another version, prompt, rubric or model).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from scoregate import __version__
from scoregate.analysis.judge_calibration import CalibrationReport, ScorePairs, compute
from scoregate.app.calibration_request import CalibrationRequest
from scoregate.app.calibration_sources import pairs_from_runs
from scoregate.app.run.receipts import sha256_text
from scoregate.catalog.evaluators import EvaluatorSpec
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError, UsageError
from scoregate.scoring.kinds.llm_judge import as_llm_judge
from scoregate.store.record import EvaluatorReceipt, ModelReceipt
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore

CALIBRATIONS_DIR = "calibrations"
CalibrationMetric = Literal[
    "spearman",
    "kendall",
    "pearson",
    "qwk",
    "exact",
    "within_one",
    "per_document.spearman",
    "per_document.kendall",
    "per_document.pearson",
]
"""Agreement metrics a gate can put a floor on (higher is better); `per_document.*` are summary-level."""
CalibrationStatus = Literal["pass", "fail", "incomplete"]


@dataclass(frozen=True)
class JudgeIdentity:
    """What a calibration is bound to: the evaluator as specified, and the model that judged."""

    evaluator: str
    kind: str
    version: int
    fingerprint: str
    file_hash: str | None
    model: dict[str, str | None] | None
    prompt_hash: str | None = None
    """Hash of the judge's prompt, reasoning prompt and variables (None for a counter)."""
    rubric_hash: str | None = None
    """Hash of the judge's score fields: keys, types, ranges, descriptions (None for a counter)."""


@dataclass(frozen=True)
class RunCalibration:
    """A calibration computed from stored runs; `saved_to` is set when it was written to the project."""

    report: CalibrationReport
    runs: list[str]
    judge: JudgeIdentity | None
    saved_to: Path | None = None
    evaluator_version: str | None = None
    """The deployed (Langfuse) evaluator version whose live scores were measured (`--live`), else None."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return {
            **self.report.to_dict(),
            "runs": self.runs,
            "evaluator_version": self.evaluator_version,
            "judge": asdict(self.judge) if self.judge else None,
            "saved_to": str(self.saved_to) if self.saved_to else None,
        }


def evaluator_fingerprint(spec: EvaluatorSpec) -> str:
    """Return the hash of what makes an evaluator grade as it does (everything but its description)."""
    return sha256_text(json.dumps(spec.model_dump(mode="json", exclude={"description"}), sort_keys=True))


def judge_hashes(spec: EvaluatorSpec) -> tuple[str | None, str | None]:
    """Return the hashes of a judge's prompt and of its rubric (its score fields); (None, None) for a counter."""
    judge = as_llm_judge(spec)
    if judge is None:
        return None, None
    prompt = judge.model_dump(mode="json", include={"prompt", "reasoning_prompt", "variables"})
    rubric = judge.model_dump(mode="json", include={"score", "extra", "reasoning_key"})
    return sha256_text(json.dumps(prompt, sort_keys=True)), sha256_text(json.dumps(rubric, sort_keys=True))


def _file_hash(path: Path | None) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path and path.is_file() else None


def judge_model(project: Project, spec: EvaluatorSpec, default_model: str) -> dict[str, str | None] | None:
    """Return name, provider and model id of the model judging with `spec` (None for a kind that calls none)."""
    called = spec.models_called(default_model)
    if not called:
        return None
    name = called[0]
    model = project.config.models.get(name)
    return {"name": name, "provider": model.provider if model else None, "model": model.model if model else None}


def _evaluator_of(stores: Sequence[RunStore], judge_key: str) -> str:
    names = {s.evaluator for store in stores for r in store.iter_results() for s in r.scores if s.name == judge_key}
    if len(names) != 1:
        raise ScoregateError(f"score {judge_key!r} was written by {sorted(names) or 'no evaluator'} in these runs")
    name = names.pop()
    if name.startswith("composite:"):
        raise ScoregateError(
            f"{judge_key!r} is a composite of several scores; a calibration is bound to one judge",
            hint="calibrate and save each judge score the composite weighs",
        )
    return name


def judge_identity(project: Project, stores: Sequence[RunStore], judge_key: str) -> JudgeIdentity:
    """Return the judge that wrote `judge_key` in every run; raise when the runs or the files disagree."""
    name = _evaluator_of(stores, judge_key)
    spec = project.evaluators.get(name)
    if spec is None:
        raise ScoregateError(f"the runs were scored by evaluator {name!r}, which evaluators/ no longer has")
    file_hash = _file_hash(project.sources.get(f"evaluator:{name}"))
    models: list[dict[str, str | None] | None] = []
    for store in stores:
        receipts = store.manifest_record.receipts
        used = receipts.evaluators.get(name) or EvaluatorReceipt()
        if used.version != spec.version or used.file_hash != file_hash:
            raise ScoregateError(
                f"{project.source('evaluator', name)} changed since run {store.run_id} was scored",
                hint="calibrate a run scored by the evaluator as it is now (rerun the experiment)",
            )
        default = receipts.judge_model or ModelReceipt()
        if spec.models_called(str(default.name)) and not spec.named_models():  # the run's judge, as its receipts say
            models.append({"name": default.name, "provider": default.provider, "model": default.model})
        else:
            models.append(judge_model(project, spec, str(default.name)))
    if any(m != models[0] for m in models):
        raise ScoregateError(f"the runs were judged by different models: {models}", hint="calibrate one judge at once")
    return JudgeIdentity(
        name, spec.kind, spec.version, evaluator_fingerprint(spec), file_hash, models[0], *judge_hashes(spec)
    )


def _default_scale(project: Project, judge_key: str) -> tuple[int, int] | None:
    """The judge key's integer range from its evaluator file, or (0, 1) for a boolean; None otherwise."""
    for spec in project.evaluators.values():
        for key in spec.described_scores() or []:
            if key.key != judge_key:
                continue
            if key.data_type == "boolean":
                return (0, 1)
            if key.range and all(float(b).is_integer() for b in key.range):
                return int(key.range[0]), int(key.range[1])
    return None


def calibrate_runs(project: Project, request: CalibrationRequest) -> RunCalibration:
    """Return how well a stored judge score agrees with human ratings of the same items; `save` binds it to the judge.

    `scale` defaults to the judge key's integer range in its evaluator file.
    """
    if not request.runs:
        raise UsageError("name at least one run: scoregate calibrate --run RUN_ID ...", option="--run")
    judge_key, human_key = request.judge_key, request.human_key
    stores = [RunStore.open(project.root / "runs", run_id) for run_id in dict.fromkeys(request.runs)]
    identity = judge_identity(project, stores, judge_key) if request.save else None
    version: str | None = None
    live: Callable[[RunStore], Iterable[ItemResult]] | None = None
    if request.live:
        from scoregate.app.calibration_live import choose_version, live_values, with_live_scores

        by_version = live_values(project.root, [s.run_id for s in stores], judge_key)
        version = choose_version(by_version, request.evaluator_version, judge_key, [s.run_id for s in stores])
        values = by_version[version]
        live = functools.partial(with_live_scores, values=values, judge_key=judge_key, version=version)
    pairs = pairs_from_runs(
        stores,
        project.root,
        judge_key,
        human_key,
        document_key=request.document_key,
        results=live,
        source=f"live evaluator version {version}" if version else None,
    )
    settings = project.config.settings
    report = compute(
        pairs,
        judge_key,
        human_key,
        document_key=request.document_key or ("item_id" if len(stores) > 1 else None),
        scale=request.scale or _default_scale(project, judge_key),
        resamples=request.resamples or settings.bootstrap_resamples,
        seed=settings.seed if request.seed is None else request.seed,
        corrected_labels=request.corrected_labels,
    )
    runs = [s.run_id for s in stores]
    saved_to = save_calibration(project, report, identity, stores, pairs=item_pairs(pairs)) if identity else None
    return RunCalibration(report, runs, identity, saved_to, evaluator_version=version)


def calibrate_stored_runs(root: Path, request: CalibrationRequest) -> RunCalibration:
    """`calibrate_runs` for the project at `root` (the `scoregate calibrate --run` entry point)."""
    from scoregate.tracks.project import load_project

    return calibrate_runs(load_project(root), request)


def item_pairs(pairs: ScorePairs) -> dict[str, list[float | None]] | None:
    """Return {item id: [judge, human]} of one run's pairs (what a canary re-scores), or None when pooled."""
    if len(set(pairs.items)) != len(pairs.items) or len(pairs.items) != len(pairs.judge):
        return None
    return {item: [j, h] for item, j, h in zip(pairs.items, pairs.judge, pairs.human, strict=True)}


def calibration_path(project: Project, evaluator: str) -> Path:
    """Return where the calibrations of `evaluator` are kept."""
    return project.root / CALIBRATIONS_DIR / f"{evaluator}.json"


def read_calibrations(path: Path) -> dict[str, Any]:
    """Return a calibrations file's content; raise ValueError when it is not {evaluator, scores}."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("scores"), dict):
        raise ValueError("expected {evaluator, scores: {score key: record}}")
    return data


def save_calibration(
    project: Project,
    report: CalibrationReport,
    judge: JudgeIdentity,
    stores: Sequence[RunStore],
    *,
    pairs: dict[str, list[float | None]] | None = None,
    now: datetime | None = None,
) -> Path:
    """Write the calibration of `report.judge_key` into calibrations/<evaluator>.json (replacing the key's last one)."""
    path = calibration_path(project, judge.evaluator)
    data: dict[str, Any] = {"evaluator": judge.evaluator, "scores": {}}
    if path.is_file():
        try:
            data = read_calibrations(path)
        except ValueError as exc:
            raise ScoregateError(f"cannot update it: {exc}", where=str(path), hint="fix or delete the file") from None
    calibration = report.calibration.to_dict()
    data["scores"][report.judge_key] = {
        **asdict(judge),
        "score_key": report.judge_key,
        "human_key": report.human_key,
        "runs": [s.run_id for s in stores],
        "datasets": sorted({s.manifest_record.receipts.dataset_name() for s in stores}),
        "n_total": calibration["n_total"],
        "n_pairs": calibration["n_pairs"],
        "scale": calibration["scale"],
        "excluded": report.excluded,
        "metrics": {"pooled": calibration["pooled"], "per_document": calibration["per_document"]},
        "pairs": pairs,
        "calibrated_at": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
        "tool_version": __version__,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _metric(record: dict[str, Any], metric: str) -> dict[str, Any] | None:
    group, _, name = metric.rpartition(".")
    found = (record.get("metrics") or {}).get(group or "pooled") or {}
    value = found.get(name)
    return value if isinstance(value, dict) else None


def judge_change(record: dict[str, Any], spec: EvaluatorSpec, model: dict[str, str | None] | None) -> str | None:
    """Return how the judge differs from the one a calibration record was made with, or None when the same."""
    if record.get("version") != spec.version:
        return f"version {spec.version} is not the calibrated version {record.get('version')}"
    if record.get("fingerprint") != evaluator_fingerprint(spec):
        return "its prompt, rubric or settings changed since the calibration"
    was = record.get("model") or {}
    if model is not None and (was.get("provider"), was.get("model")) != (model["provider"], model["model"]):
        return (
            f"it judges with {model['provider']}/{model['model']} ({model['name']}) but was calibrated "
            f"with {was.get('provider')}/{was.get('model')}"
        )
    return None


def calibration_status(
    project: Project,
    evaluator_name: str,
    judge_model_name: str,
    *,
    floor: float,
    metric: CalibrationMetric = "spearman",
    score_key: str | None = None,
    stat: Literal["value", "ci_low"] = "value",
    min_pairs: int = 2,
) -> tuple[CalibrationStatus, str]:
    """Return (pass | fail | incomplete, detail): is the judge, as it is now, calibrated above `floor`?

    `judge_model_name` is the run's default judge model (an evaluator's own `model:` wins). Incomplete
    when there is no calibration of the score key (default: the evaluator's primary score), when the
    evaluator's version or fingerprint or the judge model changed since, or when the metric is
    undefined or rests on fewer than `min_pairs` pairs. Pass when `stat` of `metric` ≥ `floor`.
    """
    if metric not in get_args(CalibrationMetric):
        raise ValueError(f"unknown calibration metric {metric!r}; use one of {', '.join(get_args(CalibrationMetric))}")
    spec = project.evaluators.get(evaluator_name)
    if spec is None:
        return "incomplete", f"no evaluator {evaluator_name!r} in evaluators/"
    key = score_key or spec.score_keys()[0]
    path = calibration_path(project, evaluator_name)
    how = f"run `scoregate calibrate --run RUN_ID --judge-key {key} --human-key HUMAN_KEY --save`"
    if not path.is_file():
        return "incomplete", f"{evaluator_name} was never calibrated: {how}"
    try:
        record = read_calibrations(path)["scores"].get(key)
    except ValueError as exc:
        return "incomplete", f"{path}: unreadable ({exc})"
    if not isinstance(record, dict):
        return "incomplete", f"{path} has no calibration of {key}: {how}"
    changed = judge_change(record, spec, judge_model(project, spec, judge_model_name))
    if changed:
        when = record.get("calibrated_at")
        return "incomplete", f"{evaluator_name} changed since its calibration of {when}: {changed}; recalibrate: {how}"
    found = _metric(record, metric) or {}
    value = found.get(stat)
    n_pairs = int(record.get("n_pairs") or 0)
    if value is None:
        return "incomplete", f"{metric} of {key} is undefined: {found.get('reason') or 'not recorded'}"
    if n_pairs < min_pairs:
        return "incomplete", f"the calibration of {key} rests on {n_pairs} pairs; at least {min_pairs} are needed"
    label = metric if stat == "value" else f"{metric} CI low"
    passed = value >= floor
    runs = ", ".join(record.get("runs") or [])
    when = record.get("calibrated_at")
    detail = f"{label} {value:.3f} {'≥' if passed else '<'} floor {floor:g} (n={n_pairs}; calibrated {when} on {runs})"
    return ("pass" if passed else "fail"), detail
