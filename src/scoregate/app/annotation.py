"""Human ratings of Gold items in Langfuse's annotation UI: `annotate queue` and `scores pull`.

`annotate queue DATASET_OR_RUN` creates (once, found by name) an annotation queue with the `human_*`
score configs and adds the traces of a mirrored run (of a run id, or the newest mirrored run of a
dataset, e.g. gold_v1) that are not in it yet. `scores pull RUN` reads the ratings given there back
into feedback/scores.jsonl — the file `scoregate calibrate` reads — keyed by Langfuse score id, so a
second pull adds nothing.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoregate.app.judges_scores import LiveScoresPulled, pull_live_scores
from scoregate.app.plan_labels import LabelRequest
from scoregate.app.scores_import import feedback_path, load_feedback
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.mirror_state import recorded_state
from scoregate.integrations.langfuse.public_api import PublicApi
from scoregate.integrations.langfuse.score_configs import setup_score_configs
from scoregate.integrations.langfuse.scores_file import SCORE_KEYS
from scoregate.store.repeats import iter_all_results, repeat_key
from scoregate.store.run_lookup import closest
from scoregate.store.run_store import RUN_ID, RunStore, list_runs
from scoregate.tracks.project import load_project

FEATURE = "annotation queues"
QUEUES = "/api/public/annotation-queues"
HUMAN_KEYS = ("human_actionability", "human_faithfulness", "human_conciseness", "human_notes")
PULL_SOURCE = "langfuse-annotation"


def mirrored_traces(store: RunStore) -> dict[str, str]:
    """Return item id → trace id for every item whose trace the Langfuse mirror confirmed (repeats 2..K of
    `run --repeat` under `<item>#repeat-N`)."""
    state = recorded_state(store)
    if state is None or not state.counts()[0]:
        return {}
    keys = (repeat_key(r.item_id, r.repeat) for r in iter_all_results(store))
    return {key: trace for key in keys if (trace := state.trace_of(key)) is not None}


def _mirrored(store: RunStore) -> bool:
    state = recorded_state(store)
    return state is not None and state.counts()[0] > 0


def resolve_run(root: Path, target: str) -> RunStore:
    """Return run `target`, or the newest run of dataset `target` mirrored to Langfuse; raise saying what to do."""
    runs_dir = root / "runs"
    if RUN_ID.fullmatch(target) and (runs_dir / target).is_dir():
        store = RunStore.open(runs_dir, target)
    else:
        stored = {s: s.manifest_record.receipts.dataset_name() for s in list_runs(runs_dir)}
        of_dataset = [s for s, dataset in stored.items() if dataset == target]
        mirrored = [s for s in of_dataset if _mirrored(s)]
        if not mirrored:
            known = [s.run_id for s in stored] + sorted(set(stored.values()))
            what = (
                f"no run of dataset {target!r} is mirrored to Langfuse in {runs_dir}"
                if of_dataset
                else f"no run or dataset {target!r} in {runs_dir}{closest(target, known)}"
            )
            raise ScoregateError(
                what,
                hint="run an experiment on the dataset (e.g. `scoregate run gold_judges`) with Langfuse configured, "
                "or mirror a run with `scoregate langfuse-sync RUN_ID`",
            )
        store = mirrored[0]
    if not _mirrored(store):
        raise ScoregateError(
            f"run {store.run_id} has no trace in Langfuse yet",
            hint=f"mirror it first: `scoregate langfuse-sync {store.run_id}`",
        )
    return store


@dataclass
class QueueReport:
    """What `annotate queue` did."""

    run_id: str
    queue_id: str
    queue_name: str
    created: bool
    added: int
    already: int
    url: str
    escalated: str | None = None
    """The cascade judge whose escalated items alone were queued (None: every item)."""
    planned: bool = False
    """Only the items a label plan chose were queued."""


def queue_run(
    root: Path,
    target: str,
    *,
    api: PublicApi | None = None,
    escalated: str | None = None,
    labels: LabelRequest | None = None,
) -> QueueReport:
    """Create (once) the dataset's annotation queue with the human score configs; add the run's traces not in it
    (with `escalated`, only those of the items that cascade judge sent to its strong judge; with `labels`, only the
    items `scoregate plan --labels` chooses)."""
    project = load_project(root)
    store = resolve_run(project.root, target)
    keep = None
    if escalated is not None:
        from scoregate.app.cascade import escalated_items

        keep = escalated_items(project, store, escalated)
    if labels is not None:
        from scoregate.app.plan_labels import plan_labels_for

        chosen = plan_labels_for(project, store, labels).chosen
        keep = (keep or set()) | {item for items in chosen.values() for item in items}
    dataset = store.manifest_record.receipts.dataset_name()
    name = f"scoregate {dataset} human ratings"
    own = api is None
    api = api or PublicApi()
    try:
        configs = setup_score_configs(project, api=api).ids
        missing = [k for k in HUMAN_KEYS if k not in configs]
        if missing:
            raise ScoregateError(
                f"Langfuse has no usable score config for {', '.join(missing)}",
                hint="see `scoregate langfuse setup` for the conflict, and resolve it in Langfuse",
            )
        queue = next((q for q in api.pages(FEATURE, "listing annotation queues", QUEUES) if q["name"] == name), None)
        created = queue is None
        if queue is None:
            body = {"name": name, "description": f"scoregate: rate the {dataset} items (Gold) for calibrate",
                    "scoreConfigIds": [configs[k] for k in HUMAN_KEYS]}  # fmt: skip
            queue = api.call(FEATURE, f"creating annotation queue {name!r}", "POST", QUEUES, json=body)
        items = f"{QUEUES}/{queue['id']}/items"
        present = {i["objectId"] for i in api.pages(FEATURE, "listing the queue's items", items)}
        traces = mirrored_traces(store)
        if keep is not None:
            traces = {key: trace for key, trace in traces.items() if key.partition("#")[0] in keep}
        added = 0
        for trace_id in traces.values():
            if trace_id not in present:
                api.call(FEATURE, "adding a trace to the annotation queue", "POST", items,
                         json={"objectId": trace_id, "objectType": "TRACE"})  # fmt: skip
                added += 1
        url = f"{api.host}/project/{api.project_id()}/annotation-queues/{queue['id']}"
        already = len(traces) - added
        return QueueReport(
            store.run_id, str(queue["id"]), name, created, added, already, url, escalated, labels is not None
        )
    finally:
        if own:
            api.close()


@dataclass
class PullReport:
    """What `scores pull` brought back."""

    run_id: str
    path: Path
    new: int
    known: int
    keys: dict[str, int]
    live: LiveScoresPulled | None = None
    """The live judges' scores of the run's traces, with their evaluator versions (feedback/live_judges.jsonl)."""


def _record(score: dict[str, Any], run_id: str, item_id: str, now: dt.datetime) -> dict[str, Any]:
    return {
        "score_id": score["id"],
        "key": score["name"],
        "value": score["value"],
        "data_type": score.get("dataType") or ("TEXT" if isinstance(score["value"], str) else "NUMERIC"),
        "comment": score.get("comment"),
        "rater": score.get("authorUserId"),
        "trace_id": (score.get("subject") or {}).get("traceId") or (score.get("subject") or {}).get("id"),
        "observation_id": None,
        "run_id": run_id,
        "item_id": item_id,
        "timestamp": score["timestamp"],
        "source": f"{PULL_SOURCE}:{score.get('queueId') or ''}".rstrip(":"),
        "imported_at": now.isoformat(),
    }


def pull_scores(root: Path, run_id: str, *, api: PublicApi | None = None) -> PullReport:
    """Bring the run's human ratings (Langfuse annotation scores) into feedback/scores.jsonl, new ones only."""
    project = load_project(root)
    store = resolve_run(project.root, run_id)
    known = load_feedback(project.root)
    now = dt.datetime.now(dt.UTC)
    fresh: list[dict[str, Any]] = []
    keys: dict[str, int] = {}
    own = api is None
    api = api or PublicApi()
    traces = mirrored_traces(store)
    try:
        for item_id, trace_id in traces.items():
            params = {"traceId": trace_id, "source": "ANNOTATION", "fields": "details,subject,annotation", "limit": 100}
            answer = api.call("scores", "reading the ratings of a trace", "GET", "/api/public/v3/scores", params=params)
            for score in answer.get("data") or []:
                if score["name"] not in SCORE_KEYS:
                    continue
                keys[score["name"]] = keys.get(score["name"], 0) + 1
                if score["id"] not in known:
                    fresh.append(_record(score, store.run_id, item_id, now))
                    known[score["id"]] = fresh[-1]
        live = pull_live_scores(project.root, store.run_id, traces, api)
    finally:
        if own:
            api.close()
    path = feedback_path(project.root)
    if fresh:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in fresh))
    return PullReport(store.run_id, path, len(fresh), sum(keys.values()) - len(fresh), keys, live)
