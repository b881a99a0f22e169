"""The live judges' scores on a run's traces, kept with the evaluator version that wrote each (`scores pull`).

A server-side judge's score names its evaluator and that evaluator's version in its metadata
(`evaluator_id`, `evaluator_version_id`, `evaluation_rule_id`). `scores pull RUN` keeps each such score of the
run's traces in feedback/live_judges.jsonl, keyed by score id (a second pull adds nothing), beside the human
ratings of feedback/scores.jsonl: a live figure can then be tied to the exact judge version that produced it.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoregate.integrations.langfuse.public_api import PublicApi
from scoregate.store.live_judges import LIVE_SCORES_FILE


@dataclass
class LiveScoresPulled:
    """What `scores pull` kept of the live judges' scores."""

    path: Path
    new: int = 0
    known: int = 0
    versions: dict[str, int] = field(default_factory=dict)
    """`score key @ evaluator version id` → how many of the run's traces that version scored."""


def _known(path: Path) -> set[str]:
    if not path.is_file():
        return set()
    return {json.loads(line)["score_id"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def _record(score: dict[str, Any], run_id: str, item_id: str, now: dt.datetime) -> dict[str, Any]:
    meta, subject = score.get("metadata") or {}, score.get("subject") or {}
    return {
        "score_id": score["id"],
        "key": score["name"],
        "value": score["value"],
        "data_type": score.get("dataType"),
        "comment": score.get("comment"),
        "trace_id": subject.get("traceId") or subject.get("id"),
        "observation_id": subject.get("id") if subject.get("kind") == "observation" else None,
        "run_id": run_id,
        "item_id": item_id,
        "timestamp": score.get("timestamp"),
        "evaluator_id": meta.get("evaluator_id"),
        "evaluator_version_id": meta.get("evaluator_version_id"),
        "evaluation_rule_id": meta.get("evaluation_rule_id"),
        "imported_at": now.isoformat(),
    }


def pull_live_scores(root: Path, run_id: str, traces: dict[str, str], api: PublicApi) -> LiveScoresPulled:
    """Keep the new live-judge scores (`source: EVAL` with an evaluator version) of the run's traces."""
    pulled = LiveScoresPulled(root / LIVE_SCORES_FILE)
    known, now, fresh = _known(pulled.path), dt.datetime.now(dt.UTC), []
    for item_id, trace_id in traces.items():
        params = {"traceId": trace_id, "source": "EVAL", "fields": "details,subject", "limit": 100}
        answer = api.call("scores", "reading the live judges' scores", "GET", "/api/public/v3/scores", params=params)
        for score in answer.get("data") or []:
            version = (score.get("metadata") or {}).get("evaluator_version_id")
            if not version:
                continue
            label = f"{score['name']} @ {version}"
            pulled.versions[label] = pulled.versions.get(label, 0) + 1
            if score["id"] in known:
                pulled.known += 1
                continue
            known.add(score["id"])
            fresh.append(_record(score, run_id, item_id, now))
    if fresh:
        pulled.path.parent.mkdir(parents=True, exist_ok=True)
        with pulled.path.open("a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in fresh))
    pulled.new = len(fresh)
    return pulled
