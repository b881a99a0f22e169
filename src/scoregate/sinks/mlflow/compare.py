"""Mirror comparisons and per-item scores into MLflow.

`mirror_comparison`: one MLflow run per (run A, run B) pair in the experiment `comparisons (<project>)`,
found again by tag so a repeated compare updates it, with metrics per score (`<score>_diff`,
`_diff_ci_low`, `_diff_ci_high`, `_wilcoxon_p`, `_ttest_p`, `_p_holm`, `_cohens_dz`, `_mde`, ...; with
`compare --estimate corrected`, `<score>_corrected_diff`, `_corrected_diff_ci_low`, `_corrected_diff_ci_high`, NaN
when null, and a tag `corrected_verdict.<score>` with the verdict or the null reason),
tags linking both runs, and a tag `compare.<other run id>` on each compared run's own MLflow run.

`log_evaluation_rows`: a run's per-item scores as MLflow evaluation rows, through
`mlflow.genai.evaluate` on static outputs (MLflow 3.17): each item becomes a trace whose inputs hold
the item id, and one scorer per score key replays the stored value (a null score becomes an
assessment error carrying its reason, never a 0). No model is called: it runs offline. The rows are
attached to the scoregate run's MLflow run (mirrored first when needed), so its Traces/Evaluations
tab shows them; MLflow also logs `<score>/mean` metrics there. Logging again replaces the rows.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.sinks.mlflow.client import project_client, tracking_uri
from scoregate.sinks.mlflow.experiments import earlier_experiment_name, experiment_name
from scoregate.sinks.mlflow.experiments import experiment_id as scoregate_experiment
from scoregate.sinks.mlflow.run_mirror import find_or_create_run, mirror_run
from scoregate.store.run_store import RunStore

if TYPE_CHECKING:
    from scoregate.sinks.contract import Comparison

COMPARISON_TAG = "scoregate.comparison"
ROWS_TAG = "scoregate.eval_rows"
ROW_MARK = "scoregate.row"
ROW_KINDS = ("numeric", "boolean", "categorical")
STAT_FIELDS = (
    "n", "mean_a", "mean_b", "diff", "diff_ci_low", "diff_ci_high", "wilcoxon_p", "ttest_p",
    "cohens_dz", "mde", "wins", "ties", "losses",
)  # fmt: skip


@dataclass
class MirroredComparison:
    """The comparison's MLflow run id, and what could not be done."""

    run_id: str
    warnings: list[str] = field(default_factory=list)


def comparison_metrics(data: dict[str, Any]) -> dict[str, float]:
    """Return the flat metrics of a comparison (its `--json` form): per score `<score>_<stat>`, item counts,
    preference."""
    metrics: dict[str, float] = {
        "items_shared": float(data["shared_items"]),
        "items_only_a": float(data["run_a"]["only_here"]),
        "items_only_b": float(data["run_b"]["only_here"]),
    }
    for name, score in data["scores"].items():
        for stat in STAT_FIELDS:
            if isinstance(score.get(stat), int | float):
                metrics[f"{name}_{stat}"] = float(score[stat])
        if score.get("p_adjusted") is not None:
            metrics[f"{name}_p_holm"] = float(score["p_adjusted"])
        corrected = score.get("corrected")  # `compare --estimate corrected`: NaN where it cannot be computed
        if isinstance(corrected, dict):
            for stat, field_name in (("diff", "value"), ("diff_ci_low", "ci_low"), ("diff_ci_high", "ci_high")):
                value = corrected.get(field_name)
                metrics[f"{name}_corrected_{stat}"] = float("nan") if value is None else float(value)
    preference = data.get("preference")
    if preference:
        for stat in ("win_rate", "ci_low", "ci_high", "sign_test_p"):
            value = preference["win_rate"].get(stat)
            if value is not None:
                metrics[f"preference_{stat}"] = float(value)
        metrics["preference_judged"] = float(preference["judged"])
        metrics["preference_items"] = float(preference["items"])
    return metrics


def _verdicts(comparison: Comparison) -> str:
    by_verdict: dict[str, list[str]] = {}
    for name, score in comparison.result.scores.items():
        by_verdict.setdefault(score.stats.verdict, []).append(name)
    return "; ".join(f"{verdict}: {', '.join(names)}" for verdict, names in by_verdict.items())


def _mlflow_run_of(store: RunStore, project_root: Path, warnings: list[str]) -> str | None:
    """The MLflow run of a scoregate run, mirroring it first when it never was."""
    run_id = store.links.get("mlflow_run_id")
    if run_id:
        return str(run_id)
    if store.summary is None:
        warnings.append(f"run {store.run_id} is not in MLflow and has no summary to mirror (it did not finish)")
        return None
    try:
        return mirror_run(store, project_root=project_root)
    except Exception as exc:  # the comparison itself is mirrored; the link can be redone
        warnings.append(f"run {store.run_id} could not be mirrored to MLflow: {exc}")
        return None


def mirror_comparison(compared: Comparison, *, project_root: Path) -> MirroredComparison:
    """Create or update the MLflow run of a comparison; tag both compared runs; return its id."""
    from mlflow.entities import Metric, Param, RunTag

    client = project_client(project_root)
    comparison, store_a, store_b = compared.result, compared.run_a, compared.run_b
    project = store_b.manifest_record.receipts.project
    experiment_id = scoregate_experiment(
        client, experiment_name(project, "comparisons"), uri=tracking_uri(project_root), project_root=project_root,
        earlier=earlier_experiment_name(project, "comparisons"),
    )  # fmt: skip
    key = f"{store_a.run_id}..{store_b.run_id}"
    run_id, _ = find_or_create_run(
        client,
        experiment_id,
        tag=COMPARISON_TAG,
        key=key,
        run_name=f"{store_b.run_id} vs {store_a.run_id}",
        legacy_name=f"{store_b.run_id} vs {store_a.run_id}",
    )
    mirrored = MirroredComparison(run_id)
    links = {"a": _mlflow_run_of(store_a, project_root, mirrored.warnings),
             "b": _mlflow_run_of(store_b, project_root, mirrored.warnings)}  # fmt: skip
    tags = {
        COMPARISON_TAG: key,
        "scoregate.run_a": store_a.run_id,
        "scoregate.run_b": store_b.run_id,
        "mlflow.note.content": f"B = {store_b.run_id} against A = {store_a.run_id}: {_verdicts(compared)}",
    }
    for side, linked in links.items():
        if linked:
            tags[f"mlflow_run_{side}"] = linked
    for name, score in comparison.scores.items():
        tags[f"verdict.{name}"] = score.stats.verdict
    for name, data in compared.record["scores"].items():
        if isinstance(data.get("corrected"), dict):
            corrected = data["corrected"]
            tags[f"corrected_verdict.{name}"] = (
                corrected["verdict"] if corrected["value"] is not None else (f"null: {corrected['reason']}")
            )
    existing = client.get_run(run_id).data.params
    params = {"run_a": store_a.run_id, "run_b": store_b.run_id, "alpha": str(comparison.alpha),
              "margins": json.dumps(comparison.margins, sort_keys=True)}  # fmt: skip
    client.log_batch(
        run_id,
        metrics=[Metric(k, v, 0, 0) for k, v in comparison_metrics(compared.record).items()],
        params=[Param(k, v) for k, v in params.items() if k not in existing],
        tags=[RunTag(k, v[:8000]) for k, v in tags.items()],
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "comparison.json"
        path.write_text(json.dumps(compared.record, indent=2, default=str), encoding="utf-8")
        client.log_artifact(run_id, str(path))
    client.set_terminated(run_id, "FINISHED")
    for side, other, linked in (("A", store_b.run_id, links["a"]), ("B", store_a.run_id, links["b"])):
        if linked:
            note = f"run {side} of comparison {run_id}; {_verdicts(compared)}"
            client.set_tag(linked, f"compare.{other}", note[:8000])
    return mirrored


@contextlib.contextmanager
def _offline_evaluation(uri: str, experiment_id: str) -> Iterator[None]:
    """Evaluate into `experiment_id`; MLflow's process-wide settings are restored afterwards.

    Trace export is synchronous (the harness reads each trace back at once) and stdout stays clean.
    """
    import mlflow
    import mlflow.tracing.provider
    import mlflow.tracking.fluent as fluent

    defaults = {"MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false"}
    if uri.startswith("sqlite:"):
        defaults["MLFLOW_GENAI_EVAL_MAX_WORKERS"] = "1"  # one writer: sqlite serialises writes anyway
    added = {k: v for k, v in defaults.items() if k not in os.environ}
    active, env_experiment = fluent._active_experiment_id, os.environ.get("MLFLOW_EXPERIMENT_ID")
    os.environ.update(added)
    mlflow.tracing.provider.reset()  # rebuild the exporter with the settings above
    try:
        mlflow.set_experiment(experiment_id=experiment_id)  # traces go to the active experiment
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        for k in added:
            os.environ.pop(k, None)
        fluent._active_experiment_id = active
        if env_experiment is None:
            os.environ.pop("MLFLOW_EXPERIMENT_ID", None)
        else:
            os.environ["MLFLOW_EXPERIMENT_ID"] = env_experiment
        mlflow.tracing.provider.reset()


def _replay_scorer(key: str, rows: dict[str, dict[str, Any]]) -> Any:
    """A scorer named `key` that returns the stored score of the row's item (or its reason as an error)."""
    from mlflow.entities import AssessmentSource, Feedback
    from mlflow.genai.scorers import scorer

    def replay(inputs: dict[str, Any]) -> Any:
        stored = rows[inputs["item_id"]].get(key)
        source = AssessmentSource(source_type="CODE", source_id=f"scoregate:{stored['evaluator'] if stored else key}")
        if stored is None:
            return Feedback(name=key, error="not produced by its evaluator for this item", source=source)
        if stored["value"] is None:
            return Feedback(name=key, error=stored["reason"] or "not measured", source=source)
        value = int(stored["value"]) if isinstance(stored["value"], bool) else stored["value"]
        return Feedback(name=key, value=value, rationale=stored["comment"], source=source)

    replay.__name__ = key
    made: Callable[..., Any] = scorer(replay, name=key)
    return made


def _remove_rows(client: Any, experiment_id: str, run_id: str) -> None:
    import mlflow

    traces = mlflow.search_traces(locations=[experiment_id], run_id=run_id, return_type="list")
    ours = [t.info.trace_id for t in traces if t.info.tags.get(ROW_MARK)]
    if ours:
        client.delete_traces(experiment_id, trace_ids=ours)


def log_evaluation_rows(store: RunStore, *, project_root: Path) -> int:
    """Write a run's per-item scores to its MLflow run as evaluation rows; return the number of rows."""
    import mlflow

    warnings: list[str] = []
    run_id = _mlflow_run_of(store, project_root, warnings)
    if run_id is None:
        raise RuntimeError("; ".join(warnings))
    client = project_client(project_root)
    run = client.get_run(run_id)
    experiment_id = run.info.experiment_id
    rows: dict[str, dict[str, Any]] = {}
    data: list[dict[str, Any]] = []
    keys: dict[str, None] = {}
    for result in store.iter_results():
        rows[result.item_id] = {
            s.name: {"value": s.value, "reason": s.reason, "comment": s.comment, "evaluator": s.evaluator}
            for s in result.scores
            if s.data_type in ROW_KINDS
        }
        keys.update(dict.fromkeys(rows[result.item_id]))
        output = result.output if result.error is None else {"error": result.error}
        data.append({
            "inputs": {**result.input, "item_id": result.item_id},
            "outputs": output,
            "tags": {ROW_MARK: store.run_id, "scoregate.prompt": result.prompt},
        })  # fmt: skip
    if not data:
        return 0
    _remove_rows(client, experiment_id, run_id)
    uri = tracking_uri(project_root)
    with _offline_evaluation(uri, experiment_id), mlflow.start_run(run_id=run_id):
        mlflow.genai.evaluate(data=data, scorers=[_replay_scorer(key, rows) for key in keys])
    client.set_terminated(run_id, run.info.status, end_time=run.info.end_time)
    client.set_tag(run_id, ROWS_TAG, str(len(data)))
    return len(data)
