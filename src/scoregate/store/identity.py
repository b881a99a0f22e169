"""What names a run wherever it is shown: its model (the name in scoregate.yaml), prompt versions, dataset, progress.

`run_name` is the one label every place uses (`<model> · <prompt>@<version>`), `mirror_run_name` the name in
MLflow's runs list (what tells runs apart first, the run id last), `run_overview` the row `scoregate runs list`
prints (and `--json` returns).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from scoregate.store.run_store import RunStore

if TYPE_CHECKING:
    from scoregate.store.record import Manifest

MLFLOW_RUN_NAME_MAX = 250
"""MLflow's SQL store keeps run names in a 250-character column; longer names are cut to fit."""


def prompt_versions(prompts: Mapping[str, Any]) -> str:
    """Return `name@version, …` from receipts' prompts (dicts with `version`) or name → version."""
    parts = []
    for name, info in prompts.items():
        version = info.get("version") if isinstance(info, Mapping) else info
        parts.append(f"{name}@{version}")
    return ", ".join(parts)


def _fit(name: str) -> str:
    """Cut `name` to MLflow's run-name limit."""
    return name if len(name) <= MLFLOW_RUN_NAME_MAX else name[: MLFLOW_RUN_NAME_MAX - 1] + "…"


def run_name(model: str | None, prompts: Mapping[str, Any]) -> str:
    """Return `<model> · <prompt>@<version>[, …]`, cut to MLflow's run-name limit."""
    return _fit(" · ".join(p for p in (model, prompt_versions(prompts)) if p))


def manifest_run_name(manifest: Manifest) -> str:
    """Return the run name of a stored run from its manifest's receipts."""
    receipts = manifest.receipts
    return run_name(receipts.model.name if receipts.model else None, receipts.prompt_versions())


def run_limit(manifest: Manifest) -> int | None:
    """Return the run's `--limit` when it left items of the dataset out, else None (a full run)."""
    limit = manifest.options.limit
    dataset = manifest.receipts.dataset
    total = dataset.items if dataset else None
    if isinstance(limit, int) and (not isinstance(total, int) or limit < total):
        return limit
    return None


def mirror_run_name(manifest: Manifest) -> str:
    """Return the name a run has in MLflow (and Langfuse's metadata), what tells runs apart first:
    `<model> · @<version>[, @<version>…][ · limit N] · <prompt>[, <prompt>…] · <run id>`.

    MLflow's runs list shows about the first 21 characters of a name (checked in its 3.17 UI), so the model
    and the prompt versions lead; the run id (`<experiment>-<date>-<time>-<suffix>`), which tells apart runs
    of the same model and prompts, ends it. A `--limit` run says `limit N` after the versions.
    """
    receipts = manifest.receipts
    versions = receipts.prompt_versions()
    limit = run_limit(manifest)
    head = [
        receipts.model.name if receipts.model else None,
        ", ".join(f"@{version}" for version in versions.values()),
        f"limit {limit}" if limit else None,
    ]
    lead = " · ".join(part for part in head if part)
    room = MLFLOW_RUN_NAME_MAX - len(lead) - len(manifest.run_id) - 2 * len(" · ")
    names = ", ".join(versions)
    if len(names) > room:  # many prompts: their names are cut, never the run id
        names = names[: max(room - 1, 0)] + "…" if room > 1 else ""
    return _fit(" · ".join(part for part in (lead, names, manifest.run_id) if part))


@dataclass(frozen=True)
class RunOverview:
    """One stored run in a list: identity, progress, primary metric and verdict."""

    run_id: str
    experiment: str | None
    model: str | None
    prompts: str
    name: str
    dataset: str | None
    status: str | None
    items_done: int
    items_total: int | None
    dataset_items: int | None
    """Items in the whole dataset; more than `items_total` when the run had a `--limit`."""
    limit: int | None
    """The run's `--limit` when it left items out, else None."""
    primary_metric: str | None
    primary_mean: float | None
    verdict: str | None
    started_at: str | None
    quarantine: str | None = None
    """The gates judged with flaky items kept out (`g: pass on 31 of 33, 2 quarantined`), else None."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return asdict(self)


def run_overview(store: RunStore) -> RunOverview:
    """Return a stored run's overview; items done are counted from its results when it has no summary."""
    record, summary = store.manifest_record, store.summary_record
    receipts = record.receipts
    limit = run_limit(record)
    full = receipts.dataset.items if receipts.dataset else None
    total = min(limit, full) if limit is not None and isinstance(full, int) else full
    total = limit if total is None else total
    done = int(summary.run_metrics.value("items") or 0) if summary else len(store.done_ids())
    primary = mean = None
    scores = summary.scores if summary else {}
    for gate in receipts.gates if isinstance(receipts.gates, list) else []:
        if gate.get("metric") in scores:
            primary = str(gate["metric"])
            mean = scores[primary].mean
            break
    model = receipts.model.name if receipts.model else None
    prompts = prompt_versions(receipts.prompt_versions())
    return RunOverview(
        run_id=store.run_id,
        experiment=receipts.experiment,
        model=model,
        prompts=prompts,
        name=manifest_run_name(record),
        dataset=receipts.dataset.name if receipts.dataset else None,
        status=record.status,
        items_done=done,
        items_total=total if isinstance(total, int) else None,
        dataset_items=full if isinstance(full, int) else None,
        limit=limit,
        primary_metric=primary,
        primary_mean=mean,
        verdict=summary.verdict if summary else None,
        started_at=record.started_at,
        quarantine=summary.quarantine_note() if summary else None,
    )
