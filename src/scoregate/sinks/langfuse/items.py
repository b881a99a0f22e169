"""What the SDK's experiment runner gets: each stored item (as its Langfuse dataset item when the dataset is synced),
the experiment's metadata, and the check that links the experiment to the dataset."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scoregate.integrations.langfuse.datasets_sync import PAGE_SIZE, langfuse_item_id
from scoregate.integrations.langfuse.remote import is_not_found, path_part
from scoregate.sinks.langfuse.context import MirrorContext, mirror_key
from scoregate.sinks.langfuse.report import MirrorReport
from scoregate.sinks.langfuse.trace_attributes import ATTRIBUTE_LIMIT
from scoregate.store.identity import mirror_run_name
from scoregate.store.record import GitReceipt
from scoregate.store.records import ItemResult
from scoregate.support.key_digests import KeyDigests

if TYPE_CHECKING:
    from langfuse import Langfuse

    from scoregate.store.record import Manifest


@dataclass(frozen=True)
class LinkedItem:
    """A stored item handed to the SDK's runner as the Langfuse dataset item it came from (same id), so the
    experiment is a run of that dataset (span attributes; and a dataset run item: SDK 4's runner posts it, and
    under SDK 5 scoregate does on a server older than v4.59, `run_items.DatasetRun`)."""

    id: str
    dataset_id: str
    input: Any
    expected_output: Any
    metadata: dict[str, Any]


def link_dataset(lf: Langfuse, ctx: MirrorContext, report: MirrorReport) -> None:
    """Link the experiment to the run's Langfuse dataset when every run item is there; else say how to sync it."""
    name = ctx.manifest.receipts.dataset_name()
    report.dataset, report.dataset_linked = name, False
    options = {"max_retries": 1}
    sync = f"`scoregate datasets sync {name}` before the next run links its experiment to the dataset"
    try:
        dataset = lf.api.datasets.get(path_part(name), request_options=options)
        there = KeyDigests()  # 16 bytes per item the server lists
        page = 1
        while True:
            listed = lf.api.dataset_items.list(dataset_name=name, page=page, limit=PAGE_SIZE, request_options=options)
            for item in listed.data:
                there.add(item.id)
            if not listed.data or page >= (listed.meta.total_pages or 0):
                break
            page += 1
    except Exception as exc:
        if is_not_found(exc):
            report.notes.append(f"dataset: {name} is not synced to Langfuse, so this run is not linked to it; {sync}")
        else:
            report.warnings.append(f"dataset {name} could not be read ({type(exc).__name__}: {exc}); not linked")
        return
    wanted, missing, first_missing = 0, 0, None
    for result in ctx.store.iter_results():
        wanted += 1
        if langfuse_item_id(name, result.item_id) not in there:
            missing, first_missing = missing + 1, first_missing or result.item_id
    if missing:
        report.notes.append(
            f"dataset: {missing} of {wanted} items of this run are not in Langfuse dataset {name} "
            f"(e.g. {first_missing}), so the run is not linked to it; {sync}"
        )
        return
    ctx.dataset_id, report.dataset_linked = dataset.id, True
    report.notes.append(f"dataset: linked to Langfuse dataset {name} ({wanted} items)")


def experiment_metadata(manifest: Manifest, links: dict[str, Any]) -> dict[str, str]:
    """Experiment metadata from the receipts: ids only (the SDK puts it in span attributes)."""
    r = manifest.receipts
    dataset, model, judge, git = r.dataset, r.model, r.judge_model, r.git or GitReceipt()
    prompts = ",".join(f"{n}@{v}" for n, v in r.prompt_versions().items())
    meta = {
        "scoregate.run_id": manifest.run_id,
        "run_name": mirror_run_name(manifest),
        "scoregate.experiment": str(r.experiment or ""),
        "scoregate.version": str(r.tool_version),
        "dataset": f"{r.dataset_name()}@{str(dataset.content_hash if dataset else None)[:12]}",
        "prompts": prompts,
        "model": f"{model.name if model else None} ({model.model if model else None})",
        "judge_model": f"{judge.name if judge else None} ({judge.model if judge else None})",
        "git_commit": str(git.commit or "") + ("+dirty" if git.dirty else ""),
        "config_hash": str(r.config_hash)[:12],
        "gates_hash": str(r.gates_hash)[:12],
    }
    if links.get("mlflow_run_id"):
        meta["mlflow_run_id"] = str(links["mlflow_run_id"])
    return {k: v[:200] for k, v in meta.items() if v}


def _short_metadata(ctx: MirrorContext, item_id: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """Return the metadata values short enough for span attributes; note the others (kept in the run store)."""
    kept = {}
    for key, value in metadata.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        if len(text) > ATTRIBUTE_LIMIT:
            ctx.dropped += 1
            if len(ctx.dropped_metadata) < 8:
                ctx.dropped_metadata.append(f"{item_id}.{key}")
        else:
            kept[key] = value
    return kept


def item_data(ctx: MirrorContext, result: ItemResult) -> Any:
    """What the runner gets for one stored item: the linked Langfuse dataset item, or a plain dict."""
    full = {**result.metadata, "item_id": result.item_id, "prompt": result.prompt}
    if result.repeat != 1:  # repeats 2..K of `run --repeat`: each is its own trace
        full.update(repeat=result.repeat, mirror_key=mirror_key(result))
    metadata = _short_metadata(ctx, result.item_id, full)
    if ctx.dataset_id is not None:
        dataset = ctx.manifest.receipts.dataset_name()
        item_id = langfuse_item_id(dataset, result.item_id)
        return LinkedItem(item_id, ctx.dataset_id, result.input, result.expected_output, metadata)
    return {"input": result.input, "expected_output": result.expected_output, "metadata": metadata}
