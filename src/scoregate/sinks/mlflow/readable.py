"""What makes a mirrored MLflow run read well: rounded metrics with the same keys in every run, tags a person
filters by (model, prompt versions, verdict, dataset), the description, and the dataset as a dataset input.

`mirror_run` calls these; the full statistics (median, std, min, max, null reasons) stay in `summary.json`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.store.description import RunDescription
from scoregate.store.vocabulary import MLFLOW_RUN_METRICS, SCORE_STATS, derived_key
from scoregate.tracks.registry import headline_metrics

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, RunSummary
    from scoregate.store.sections import CascadeJudgeRecord

SIGNIFICANT = 4
CASCADE_METRICS = ("guaranteed_level", "share_kept", "cost_saved_usd", "cost_saved_share", "threshold")
"""Each cascade judge's figures, logged as `cascade.<evaluator>.<figure>`."""


def rounded(value: Any) -> float:
    """A metric value as logged: whole numbers unchanged, others to 4 significant digits, NaN when not measured."""
    if value is None or isinstance(value, str):
        return math.nan
    number = float(value)
    if not math.isfinite(number) or number.is_integer():
        return number
    return float(f"{number:.{SIGNIFICANT}g}")


def readable_metrics(summary: RunSummary) -> dict[str, float]:
    """Return the metrics mirrored to MLflow: the same keys for every run of an experiment (NaN = not measured).

    Per score `<key>_mean`, `_ci_low`, `_ci_high`, `_coverage` (text and categorical scores: `_coverage` only), and
    for a judge score with a calibration set `_corrected_mean`, `_corrected_ci_low`, `_corrected_ci_high`;
    the run metrics; each track's run-level metrics as `<track>_<key>` (the extraction track's micro metrics:
    `extraction_<key>`); per pipeline stage and, for
    `run --repeat`, the consistency metrics; `gate_<name>` (1 pass, 0 not)
    with `gates_passed` and `gates_total`; per slice of a slice gate `slice.<gate>.<field>.<value>.<stat>`; per
    cascade judge `cascade.<evaluator>.<figure>` (`CASCADE_METRICS`).
    """
    metrics: dict[str, float] = {}
    for key, stats in summary.scores.items():
        numeric = stats.data_type in ("numeric", "boolean")
        for stat in SCORE_STATS if numeric else ("coverage",):
            metrics[derived_key(key, stat)] = rounded(getattr(stats, stat))
        if numeric and (corrected := stats.corrected) is not None:  # NaN when it could not be computed
            for stat, value in (
                ("mean", corrected.value),
                ("ci_low", corrected.ci_low),
                ("ci_high", corrected.ci_high),
            ):
                metrics[derived_key(key, f"corrected_{stat}")] = rounded(value)
    for key in MLFLOW_RUN_METRICS:
        metrics[key] = rounded(summary.run_metrics.value(key))
    for track, found in headline_metrics(summary.to_dict()).items():
        metrics.update(
            {f"{track}_{key}": rounded(value) for key, value in found.items() if not isinstance(value, bool)}
        )
    stages, repeats = summary.section("stages"), summary.repeats
    if stages is not None:
        from scoregate.analysis.stage_summary import stage_metrics

        metrics.update({key: rounded(value) for key, value in stage_metrics(stages).items()})
    if repeats is not None:
        from scoregate.analysis.consistency import consistency_metrics

        metrics.update({key: rounded(value) for key, value in consistency_metrics(repeats.to_dict()).items()})
    for name, block in (summary.cascade or {}).items():  # NaN when it could not be computed: the reason is a tag
        for stat in CASCADE_METRICS:
            metrics[f"cascade.{name}.{stat}"] = rounded(getattr(block, stat))
    gates = summary.gates
    for gate in gates:
        metrics[f"gate_{gate.name}"] = 1.0 if gate.status == "pass" else 0.0
    from scoregate.analysis.slices import slice_metrics

    slice_gates = [gate.to_dict() for gate in gates if gate.slices]
    metrics.update({key: rounded(value) for key, value in slice_metrics(slice_gates).items()})
    metrics["gates_passed"] = float(sum(g.status == "pass" for g in gates))
    metrics["gates_total"] = float(len(gates))
    return metrics


def readable_tags(manifest: Manifest, summary: RunSummary) -> dict[str, str]:
    """Return the tags a person filters and reads by: model, dataset, verdict, and the markdown description."""
    model, dataset = manifest.receipts.model, manifest.receipts.dataset
    cascades = {f"cascade.{name}": _cascade_tag(block) for name, block in (summary.cascade or {}).items()}
    return {
        **cascades,
        "model": str(model.name if model else None),
        "model.id": str(model.model if model else None),
        "model.provider": str(model.provider if model else None),
        "dataset": str(dataset.name if dataset else None),
        "dataset.hash": str(dataset.content_hash if dataset else None),
        "verdict": str(summary.verdict),
        "mlflow.note.content": RunDescription(manifest, summary).markdown(),
    }


def _cascade_tag(block: CascadeJudgeRecord) -> str:
    """A cascade judge in words: what its first judge kept under which guarantee, or `null:` and why."""
    if block.threshold is None:
        return f"null: {block.reason}"
    return (
        f"the first judge {block.first_model} kept {block.kept} of {block.items} items ({block.share_kept or 0:.0%}, "
        f"confidence >= {block.threshold:g}); {block.guarantee}"
    )


def log_dataset_input(client: Any, run_id: str, manifest: Manifest, project_root: Path) -> bool:
    """Log the run's dataset as an MLflow dataset input (name, content hash, source), once; return True if added."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    dataset = manifest.receipts.dataset
    if dataset is None or not dataset.name or not dataset.content_hash:
        return False
    name, content_hash = dataset.name, dataset.content_hash
    digest = str(content_hash)[:12]
    logged = client.get_run(run_id).inputs.dataset_inputs
    if any(d.dataset.name == name and d.dataset.digest == digest for d in logged):
        return False
    path = (dataset.model_extra or {}).get("path") or f"datasets/{name}.jsonl"
    source = (project_root.resolve() / path).as_uri()
    entity = Dataset(
        name=str(name),
        digest=digest,
        source_type="local",
        source=json.dumps({"uri": source}),
        profile=json.dumps({"num_rows": dataset.items, "content_hash": content_hash}),
    )
    client.log_inputs(run_id, datasets=[DatasetInput(entity, tags=[InputTag("mlflow.data.context", "evaluation")])])
    return True
