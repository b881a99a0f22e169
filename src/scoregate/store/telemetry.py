"""Per-call telemetry export: `runs/<id>/metrics.json` (metadata + rows) and `metrics.csv`, one row per model call.

A row is one logical call as the engine made it: a call that needed retries is one row whose `retries` counts
the extra attempts (so HTTP requests = rows not served from the cache + sum of `retries`). Tokens and cost are
null where the provider gave no usage, never 0. No prompt or output text is written here.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.store.records import CallRecord, ItemResult
from scoregate.store.repeats import iter_all_results
from scoregate.store.run_store import RunStore
from scoregate.store.vocabulary import stage_of

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, Receipts

METRICS_JSON = "metrics.json"
METRICS_CSV = "metrics.csv"
COLUMNS = (
    "timestamp",
    "run_id",
    "item_id",
    "repeat",
    "stage",
    "provider",
    "model_name",
    "model",
    "prompt",
    "structured_output",
    "schema_name",
    "duration_ms",
    "latency_ms",
    "tokens_prompt",
    "tokens_completion",
    "tokens_total",
    "cost_usd",
    "success",
    "error",
    "retries",
    "cache_hit",
)


def _prompt_of(call: CallRecord, result: ItemResult, receipts: Receipts) -> str | None:
    if call.purpose == "task":
        return result.prompt
    if call.purpose.startswith("stage:"):
        stage = (receipts.stages or {}).get(call.purpose.removeprefix("stage:"), {})
        return stage.get("prompt")
    if call.purpose.startswith("judge:"):
        name = call.purpose.removeprefix("judge:")
        info = receipts.evaluators.get(name)
        return f"{name}@v{info.version}" if info else name
    return None


def _total(call: CallRecord) -> int | None:
    if call.tokens_in is None or call.tokens_out is None:
        return None
    return call.tokens_in + call.tokens_out


def telemetry_rows(store: RunStore, manifest: Manifest) -> Iterator[dict[str, Any]]:
    """Yield one row per model call of the run: first the model checks before each start (stage `model_check`,
    no item), then every item's calls (every repeat), in stored order."""
    receipts = manifest.receipts
    stages = list(receipts.stages or {})
    final_stage = stages[-1] if stages else None
    checks = manifest.model_checks
    for check in checks if isinstance(checks, list) else []:
        yield _row(store, CallRecord(**check), None, final_stage, receipts)
    for result in iter_all_results(store):
        for call in result.calls:
            yield _row(store, call, result, final_stage, receipts)


def _row(
    store: RunStore, call: CallRecord, result: ItemResult | None, final_stage: str | None, receipts: Receipts
) -> dict[str, Any]:
    return {
        "timestamp": call.started_at,
        "run_id": store.run_id,
        "item_id": result.item_id if result is not None else None,
        "repeat": result.repeat if result is not None else None,
        "stage": stage_of(call.purpose, final_stage),
        "provider": call.provider,
        "model_name": call.model_name,
        "model": call.model,
        "prompt": _prompt_of(call, result, receipts) if result is not None else None,
        "structured_output": call.structured,
        "schema_name": call.schema_name,
        "duration_ms": call.duration_ms,
        "latency_ms": call.latency_ms,
        "tokens_prompt": call.tokens_in,
        "tokens_completion": call.tokens_out,
        "tokens_total": _total(call),
        "cost_usd": call.cost_usd,
        "success": call.error is None,
        "error": call.error,
        "retries": call.retries,
        "cache_hit": call.cached,
    }


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def write_telemetry(store: RunStore, manifest: Manifest | None = None) -> tuple[Path, Path]:
    """Write metrics.json and metrics.csv for a stored run in one streaming pass; return their paths.
    `manifest`: the run's manifest when the caller read it already (else it is read here)."""
    manifest = manifest or store.manifest_record
    receipts = manifest.receipts
    metadata = {
        "run_id": store.run_id,
        "experiment": receipts.experiment,
        "status": manifest.status,
        "started_at": manifest.started_at,
        "finished_at": manifest.finished_at,
        "dataset": receipts.dataset.name if receipts.dataset else None,
        "model": receipts.model.name if receipts.model else None,
        "prompts": receipts.prompt_versions(),
        "repeat": manifest.options.repeat,
        "pipeline_mode": receipts.pipeline_mode,
        "columns": list(COLUMNS),
    }
    json_path = store.directory / METRICS_JSON
    csv_path = store.directory / METRICS_CSV
    json_tmp, csv_tmp = (p.with_name(p.name + ".tmp") for p in (json_path, csv_path))
    count = 0
    with json_tmp.open("w", encoding="utf-8") as out, csv_tmp.open("w", encoding="utf-8", newline="") as table:
        writer = csv.writer(table)
        writer.writerow(COLUMNS)
        out.write(json.dumps(metadata, indent=1)[:-2] + ',\n "rows": [')
        for row in telemetry_rows(store, manifest):  # streamed: memory stays flat however many calls the run made
            out.write(("," if count else "") + "\n  " + json.dumps(row, default=str))
            writer.writerow([_csv_cell(row[c]) for c in COLUMNS])
            count += 1
        out.write(f'\n ],\n "calls": {count}\n}}\n')
    os.replace(json_tmp, json_path)
    os.replace(csv_tmp, csv_path)
    return json_path, csv_path
