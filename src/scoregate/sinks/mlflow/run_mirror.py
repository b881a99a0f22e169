"""Mirror a stored run into MLflow: one run per scoregate run, found again by tag so re-syncs never duplicate."""

from __future__ import annotations

import csv
import json
import tempfile
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.errors import ScoregateError
from scoregate.sinks.contract import RunRecord
from scoregate.sinks.mlflow.client import tracking_uri
from scoregate.sinks.mlflow.experiments import earlier_experiment_name, experiment_name
from scoregate.sinks.mlflow.experiments import experiment_id as scoregate_experiment
from scoregate.sinks.mlflow.readable import log_dataset_input, readable_metrics, readable_tags
from scoregate.store.identity import mirror_run_name
from scoregate.store.invalidation import invalidation_of, invalidation_tags
from scoregate.store.record import GitReceipt
from scoregate.store.run_store import RunStore
from scoregate.store.stop_record import stop_fields

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, RunSummary

RUN_ID_TAG = "scoregate.run_id"
QUARANTINE_KEYS = ("kept_out", "breaking", "gated", "total")
"""The counts of tag `gate.<name>.quarantine` (a JSON object): flaky items kept out, those breaking the rule in the
run, the items that decided the gate, the run's items."""


def _ms(iso: str | None) -> int | None:
    return int(datetime.fromisoformat(iso).timestamp() * 1000) if iso else None


def params_of(manifest: Manifest) -> dict[str, str]:
    """Return the immutable run parameters: receipts and sampling settings (never secrets)."""
    r, options = manifest.receipts, manifest.options
    git, dataset, model, judge = r.git or GitReceipt(), r.dataset, r.model, r.judge_model
    if dataset is None or model is None or judge is None:
        missing = "dataset" if dataset is None else "model" if model is None else "judge_model"
        raise KeyError(missing)  # every run scoregate writes has them: the manifest is damaged
    params = {
        "tool_version": str(r.tool_version),
        "git_commit": str(git.commit),
        "git_dirty": str(git.dirty),
        "config_hash": str(r.config_hash),
        "dataset": dataset.name,
        "dataset_hash": str(dataset.content_hash),
        "dataset_items": str(dataset.items),
        "model": str(model.name),  # as the tag `model`: the name in scoregate.yaml
        "model_name": str(model.name),  # kept: runs mirrored before `model` took this meaning have it too
        "provider_model": str(model.model),
        "model_provider": str(model.provider),
        "model_endpoint": str(model.endpoint),
        "judge_model": str(judge.model),
        "judge_endpoint": str(judge.endpoint),
        "gates_hash": str(r.gates_hash),
        "limit": str(options.limit),
        "concurrency": str(options.concurrency),
        "cache": str(options.cache),
    }
    if options.repeat > 1:
        params["repeat"] = str(options.repeat)
    for name, info in r.prompts.items():
        params[f"prompt.{name}.version"] = str(info.version)
        params[f"prompt.{name}.temperature"] = str(info.temperature)
        params[f"prompt.{name}.max_tokens"] = str(info.max_tokens)
    for name, evaluator in r.evaluators.items():
        params[f"evaluator.{name}"] = f"v{evaluator.version} {str(evaluator.file_hash)[:12]}"
    return params


def tags_of(manifest: Manifest, summary: RunSummary, links: dict[str, Any]) -> dict[str, str]:
    """Return the mutable tags: verdict, gate statuses, prompt identity, run id, links to other mirrors."""
    prompts = manifest.receipts.prompts
    tags = {
        RUN_ID_TAG: manifest.run_id,
        "scoregate.experiment": str(manifest.receipts.experiment),
        "scoregate.verdict": str(summary.verdict),
        "scoregate.status": str(manifest.status),  # `stopped_early`: not the whole dataset (no promotion evidence)
        "prompt.names": ",".join(prompts),
        "prompt.versions": ",".join(f"{n}@{i.version}" for n, i in prompts.items()),
    }
    for name, info in prompts.items():
        tags[f"prompt.{name}.version"] = str(info.version)
        tags[f"prompt.{name}.labels"] = ",".join(info.labels)
    if len(prompts) == 1:
        ((name, info),) = prompts.items()
        tags.update({"prompt.name": name, "prompt.version": str(info.version)})
    tags["mlflow.runName"] = mirror_run_name(manifest)
    for gate in summary.gates:
        tags[f"gate.{gate.name}"] = gate.verdict_words()  # `pass on 5 of 6, 1 quarantined`: never a plain pass
        if gate.quarantined:  # what `scoregate promote` weighs against settings.flaky.promotion
            kept = [len(gate.quarantined), len(gate.quarantined_breaking or []), gate.gated_items, gate.total_items]
            tags[f"gate.{gate.name}.quarantine"] = json.dumps(dict(zip(QUARANTINE_KEYS, kept, strict=True)))
        if gate.failing_items:
            tags[f"gate.{gate.name}.detail"] = str(gate.detail)[:500]
    if "langfuse_experiment_url" in links:
        tags["langfuse.experiment_url"] = str(links["langfuse_experiment_url"])
    return tags


def write_scores_csv(store: RunStore, path: Path, keys: list[str]) -> None:
    """Write one row per item: id, prompt, error, then every score (empty cell = not measured)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "index", "prompt", "error", *keys])
        for result in store.iter_results():  # streamed: one item in memory at a time
            by_name = {s.name: s.value for s in result.scores}
            writer.writerow(
                [result.item_id, result.index, result.prompt, result.error or "",
                 *("" if by_name.get(k) is None else by_name[k] for k in keys)]
            )  # fmt: skip


def mirror_timestamp(manifest: Manifest) -> int:
    """Return the fixed time (ms) of the run's metrics: its start, which no resume rewrites.

    MLflow keeps a metric value once per (key, timestamp, step); a resume that moved the timestamp
    would log every metric a second time. A `--retry-errors` pass raises the step (the manifest's
    `revision`), so the newer values are the latest ones and the history stays.
    """
    return _ms(manifest.started_at) or 0


def find_or_create_run(
    client: Any,
    experiment_id: str,
    *,
    tag: str,
    key: str,
    run_name: str,
    legacy_name: str | None = None,
    start_time: int | None = None,
) -> tuple[str, bool]:
    """Return the MLflow run tagged `tag=key`, adopting a half-made one named `legacy_name`, or create it; and
    whether it was created by this call.

    The run is created with its identifying tag in the same call, so a kill can never leave a run the
    next mirror cannot find. A run named `legacy_name` (default `key`) without the tag (made by an older
    version, which named runs by their id and tagged them later, killed in between) is adopted; further
    untagged duplicates are deleted.
    """
    found = client.search_runs([experiment_id], filter_string=f"tags.`{tag}` = '{key}'", max_results=1)
    if found:
        return str(found[0].info.run_id), False
    named = client.search_runs(
        [experiment_id], filter_string=f"attributes.run_name = '{legacy_name or key}'", max_results=100,
        order_by=["attributes.start_time ASC"],
    )  # fmt: skip
    untagged = [run for run in named if tag not in run.data.tags]
    if untagged:
        keep, *extra = [run.info.run_id for run in untagged]
        client.set_tag(keep, tag, key)
        for run_id in extra:
            client.delete_run(run_id)
        return str(keep), False
    run = client.create_run(experiment_id, start_time=start_time, tags={tag: key}, run_name=run_name)
    return str(run.info.run_id), True


def mirror_run(store: RunStore, *, project_root: Path, record: RunRecord | None = None) -> str:
    """Create or update the MLflow run of a stored run; return the MLflow run id. `record`: the run's manifest
    and summary when the caller read them already (else they are read here, once)."""
    return mirror_run_created(store, project_root=project_root, record=record)[0]


def mirror_run_created(store: RunStore, *, project_root: Path, record: RunRecord | None = None) -> tuple[str, bool]:
    """Create or update the MLflow run of a stored run; return the MLflow run id and whether this call created it."""
    from mlflow.entities import Metric, Param, RunTag

    from scoregate.sinks.mlflow.client import creation_lock, tracking_client

    record = record or RunRecord.read(store)
    manifest, summary = record.manifest, record.summary
    if summary is None:
        raise ScoregateError(
            f"run {store.run_id} has no summary: it did not finish",
            hint=f"resume it: `scoregate run --resume {store.run_id}`",
        )
    uri = tracking_uri(project_root)
    client = tracking_client(uri)
    project, experiment = manifest.receipts.project, str(manifest.receipts.experiment)
    experiment_id = scoregate_experiment(
        client, experiment_name(project, experiment), uri=uri, project_root=project_root,
        earlier=earlier_experiment_name(project, experiment),
    )  # fmt: skip
    run_id, created = find_or_create_run(
        client,
        experiment_id,
        tag=RUN_ID_TAG,
        key=store.run_id,
        run_name=mirror_run_name(manifest),
        start_time=_ms(manifest.started_at),
    )
    existing_params = client.get_run(run_id).data.params
    stamp = mirror_timestamp(manifest)
    step = manifest.revision or 0
    params = [Param(k, v[:6000]) for k, v in params_of(manifest).items() if k not in existing_params]
    metrics = [Metric(k, v, stamp, step) for k, v in readable_metrics(summary).items()]
    all_tags = {**tags_of(manifest, summary, store.links), **readable_tags(manifest, summary)}
    all_tags.update(invalidation_tags(invalidation_of(store)))  # invalidated before this (first) mirror too
    stopped = stop_fields(manifest, summary)  # a stop-early run: "stopped at n of N", the bounds, the rule
    params += [Param(k, v) for k, v in stopped.params.items() if k not in existing_params]
    metrics += [Metric(k, v, stamp, step) for k, v in stopped.metrics.items()]
    all_tags.update({f"scoregate.{k}": v for k, v in stopped.tags.items()})
    tags = [RunTag(k, v[:8000]) for k, v in all_tags.items()]
    client.log_batch(run_id, metrics=metrics, params=params, tags=tags)
    with creation_lock(uri):  # MLflow makes the dataset's row once per experiment: two runs at once collide
        log_dataset_input(client, run_id, manifest, project_root)
    keys = list(summary.scores)
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = Path(tmp) / "scores.csv"
        write_scores_csv(store, csv_path, keys)
        client.log_artifact(run_id, str(csv_path))
    from scoregate.store.telemetry import write_telemetry

    write_telemetry(store, manifest)  # per-call telemetry, rebuilt from results.jsonl: a re-sync of an old run too
    for filename in ("manifest.json", "summary.json", "results.jsonl", "metrics.json", "metrics.csv"):
        client.log_artifact(run_id, str(store.directory / filename))
    if (store.directory / "report.html").is_file():  # MLflow previews HTML artifacts in its UI
        client.log_artifact(run_id, str(store.directory / "report.html"))
    client.set_terminated(run_id, "FINISHED", end_time=_ms(manifest.finished_at) or stamp or None)
    if client.get_run(run_id).data.tags.get(RUN_ID_TAG) != store.run_id:  # read back: a lost mirror is said
        raise RuntimeError(f"MLflow run {run_id} does not hold run {store.run_id} after mirroring it to {uri}")
    store.set_link("mlflow_run_id", run_id)
    store.set_link("mlflow_experiment_id", experiment_id)
    return run_id, created
