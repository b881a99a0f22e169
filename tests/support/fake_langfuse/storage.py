"""What the fake Langfuse server stores, and the server-side rules it applies (as recorded on v4.16).

Every object is kept in the JSON shape the public API returns, so handlers answer with it directly.
Rules reproduced from the recordings: datasets upsert by name and dataset items by id (null fields keep
the stored value; JSON strings are parsed), items are project-global ids, archived items drop out of
listings, every prompt create is a new version whose labels move off older versions, `latest` follows
the newest version, PATCH adds labels, a score is replaced only when id, name and the date of its
timestamp match.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import secrets
import string
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .evaluator_store import EvaluatorStore

NOT_FOUND = "LangfuseNotFoundError"


class ApiProblem(Exception):
    """An error answer: HTTP status and JSON body, raised by a storage rule."""

    def __init__(self, status: int, message: str, error: Any = NOT_FOUND) -> None:
        super().__init__(message)
        self.status = status
        self.body: dict[str, Any] = {"message": message, "error": error}


def iso(moment: dt.datetime | None = None) -> str:
    """Return `moment` (default now) as the server writes timestamps: UTC, milliseconds, `Z`."""
    moment = (moment or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_time(value: str) -> dt.datetime:
    """Parse an ISO-8601 timestamp; a naive one is taken as UTC."""
    moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def cuid() -> str:
    """Return a cuid-like id like the server gives datasets."""
    return "c" + "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(24))


def js_numbers(value: Any) -> Any:
    """Return parsed JSON as the server's JavaScript holds it: an integral float is a plain number (`0.0` → `0`).

    Recorded on v4.16: a prompt config `{"temperature": 0.0}` and an item `{"total": 219.0}` come back as
    `0` and `219`, so a client comparing its local text with the server's must compare numbers by value.
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [js_numbers(v) for v in value]
    return value


def _json_value(value: Any) -> Any:
    """Parse a string that holds JSON (the server stores `"4"` as 4); keep anything else."""
    if isinstance(value, str):
        try:
            return js_numbers(json.loads(value))
        except ValueError:
            return value
    return value


def page_of(rows: list[dict[str, Any]], page: int, limit: int) -> dict[str, Any]:
    """Return one page of `rows` with the server's `meta` block."""
    total = len(rows)
    return {
        "data": rows[(page - 1) * limit : page * limit],
        "meta": {"page": page, "limit": limit, "totalItems": total, "totalPages": math.ceil(total / limit)},
    }


def _evaluator_store() -> EvaluatorStore:
    from .evaluator_store import EvaluatorStore  # it imports this module's iso()

    return EvaluatorStore()


@dataclass
class State:
    """Everything the fake has received, in API shape. Tests read it directly."""

    project_id: str = "local-project"
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    prompts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    scores: list[dict[str, Any]] = field(default_factory=list)
    score_positions: dict[str, list[int]] = field(default_factory=dict, repr=False)
    """Where each score id is in `scores` (an upsert looks there, not through every score: benches post 10^5)."""
    spans: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    run_items: list[dict[str, Any]] = field(default_factory=list)
    score_configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    widgets: dict[str, dict[str, Any]] = field(default_factory=dict)
    dashboards: dict[str, dict[str, Any]] = field(default_factory=dict)
    queues: dict[str, dict[str, Any]] = field(default_factory=dict)
    queue_items: list[dict[str, Any]] = field(default_factory=list)
    evals: EvaluatorStore = field(default_factory=lambda: _evaluator_store())
    """The v2 evaluators and evaluation rules (evaluator_store.py)."""

    # ---- datasets and items -------------------------------------------------------------------
    def upsert_dataset(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create the dataset named in `body`, or update it (null fields keep their value)."""
        now = iso()
        current = self.datasets.get(body["name"])
        if current is None:
            current = {
                "id": cuid(),
                "projectId": self.project_id,
                "name": body["name"],
                "description": None,
                "metadata": None,
                "inputSchema": None,
                "expectedOutputSchema": None,
                "createdAt": now,
                "updatedAt": now,
            }
            self.datasets[body["name"]] = current
        for key in ("description", "metadata", "inputSchema", "expectedOutputSchema"):
            if body.get(key) is not None:
                current[key] = _json_value(body[key]) if key == "metadata" else body[key]
        current["updatedAt"] = now
        return current

    def dataset(self, name: str) -> dict[str, Any]:
        """Return the dataset called `name` or raise the server's 404."""
        if name not in self.datasets:
            raise ApiProblem(404, "Dataset not found")
        return self.datasets[name]

    def upsert_item(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create or replace a dataset item by id; ids are unique across the project's datasets."""
        dataset = self.dataset(body["datasetName"])
        item_id = body.get("id") or str(uuid.uuid4())
        current = self.items.get(item_id)
        if current is not None and current["datasetId"] != dataset["id"]:
            raise ApiProblem(404, f"Dataset item with id {item_id} not found for project {self.project_id}")
        now = iso()
        if current is None:
            current = {
                "id": item_id,
                "datasetId": dataset["id"],
                "status": "ACTIVE",
                "sourceTraceId": None,
                "sourceObservationId": None,
                "createdAt": now,
                "updatedAt": now,
                "input": None,
                "expectedOutput": None,
                "metadata": None,
                "datasetName": dataset["name"],
                "mediaReferences": [],
            }
            self.items[item_id] = current
        for key in ("input", "expectedOutput", "metadata", "sourceTraceId", "sourceObservationId", "status"):
            if body.get(key) is not None:
                current[key] = _json_value(body[key])
        current["createdAt"] = current["updatedAt"] = now  # v4 items are versioned: an upsert is a new row
        return current

    def item(self, item_id: str) -> dict[str, Any]:
        """Return the dataset item `item_id` (archived ones too) or raise the server's 404."""
        if item_id not in self.items:
            raise ApiProblem(404, "Dataset item not found")
        return self.items[item_id]

    def list_items(self, dataset_name: str | None) -> list[dict[str, Any]]:
        """Return the active items (of one dataset when named), newest first, as the server lists them."""
        dataset_id = self.dataset(dataset_name)["id"] if dataset_name else None
        rows = [i for i in self.items.values() if i["status"] == "ACTIVE" and dataset_id in (None, i["datasetId"])]
        return sorted(rows, key=lambda i: i["createdAt"], reverse=True)

    # ---- prompts ------------------------------------------------------------------------------
    def create_prompt(self, body: dict[str, Any]) -> dict[str, Any]:
        """Add a new version of the prompt; its labels (and `latest`) move off older versions."""
        versions = self.prompts.setdefault(body["name"], [])
        kind = body.get("type") or ("chat" if isinstance(body["prompt"], list) else "text")
        if versions and versions[-1]["type"] != kind:
            raise ApiProblem(
                400,
                "Previous versions have different prompt type. Create a new prompt with a different name.",
                error="InvalidRequestError",
            )
        labels = list(dict.fromkeys([*(body.get("labels") or []), "latest"]))
        tags = body["tags"] if body.get("tags") is not None else (versions[-1]["tags"] if versions else [])
        now = iso()
        for old in versions:
            old["tags"] = list(tags)
            kept = [label for label in old["labels"] if label not in labels]
            if kept != old["labels"]:
                old["labels"], old["updatedAt"] = kept, now
        version = {
            "id": str(uuid.uuid4()),
            "createdAt": now,
            "updatedAt": now,
            "projectId": self.project_id,
            "createdBy": "API",
            "prompt": body["prompt"],
            "name": body["name"],
            "version": len(versions) + 1,
            "type": kind,
            "isActive": None,
            "config": body.get("config") if body.get("config") is not None else {},
            "tags": list(tags),
            "labels": labels,
            "commitMessage": body.get("commitMessage"),
        }
        versions.append(version)
        return version

    def prompt(self, name: str, label: str | None, version: int | None) -> dict[str, Any]:
        """Return the version chosen by `version`, else by `label` (default `production`), or raise 404."""
        versions = self.prompts.get(name, [])
        if version is not None:
            found = [p for p in versions if p["version"] == version]
            where = f"with version {version}"
        else:
            label = label or "production"
            found = [p for p in versions if label in p["labels"]]
            where = f"with label '{label}'"
        if not found:
            raise ApiProblem(404, f"Prompt not found: '{name}' {where}")
        return found[0]

    def add_labels(self, name: str, version: int, new_labels: list[str]) -> dict[str, Any]:
        """Add `new_labels` to one version (kept labels stay) and remove them from every other version."""
        if "latest" in new_labels:
            raise ApiProblem(
                400, "Label 'latest' is always assigned to the latest prompt version", error="InvalidRequestError"
            )
        target = self.prompt(name, None, version)
        now = iso()
        for other in self.prompts[name]:
            if other is not target and any(label in other["labels"] for label in new_labels):
                other["labels"] = [label for label in other["labels"] if label not in new_labels]
                other["updatedAt"] = now
        target["labels"] = list(dict.fromkeys([*new_labels, *target["labels"]]))
        target["updatedAt"] = now
        return target

    def prompt_metas(self, name: str | None, label: str | None, tag: str | None) -> list[dict[str, Any]]:
        """Return one PromptMeta per prompt name, over the versions matching the filters."""
        metas = []
        for prompt_name, versions in sorted(self.prompts.items()):
            chosen = [
                v for v in versions if (label is None or label in v["labels"]) and (tag is None or tag in v["tags"])
            ]
            if (name is not None and prompt_name != name) or not chosen:
                continue
            metas.append(
                {
                    "name": prompt_name,
                    "type": chosen[-1]["type"],
                    "versions": [v["version"] for v in chosen],
                    "labels": sorted({lb for v in chosen for lb in v["labels"]}),
                    "tags": chosen[-1]["tags"],
                    "lastUpdatedAt": max(v["updatedAt"] for v in chosen),
                    "lastConfig": chosen[-1]["config"],
                }
            )
        return metas

    # ---- scores -------------------------------------------------------------------------------
    def add_score(self, body: dict[str, Any], default_time: str | None = None) -> dict[str, Any]:
        """Store a score; replace the stored one with the same id, name and timestamp date, else append."""
        now = iso()
        value = body["value"]
        data_type = body.get("dataType") or ("CATEGORICAL" if isinstance(value, str) else "NUMERIC")
        given_time = body.get("timestamp")
        moment = parse_time(given_time or default_time or now)
        score = {
            "id": body.get("id") or str(uuid.uuid4()),
            "projectId": self.project_id,
            "name": body["name"],
            "value": value,
            "dataType": data_type,
            "source": body.get("source") or "API",
            "comment": body.get("comment"),
            "metadata": body.get("metadata") or {},
            "configId": body.get("configId"),
            "queueId": body.get("queueId"),
            "authorUserId": None,
            "traceId": body.get("traceId"),
            "observationId": body.get("observationId"),
            "sessionId": body.get("sessionId"),
            "datasetRunId": body.get("datasetRunId"),
            "environment": body.get("environment") or "default",
            "timestamp": iso(moment),
            "createdAt": now,
            "updatedAt": now,
        }
        positions = self.score_positions.setdefault(score["id"], [])
        for index in positions:
            old = self.scores[index]
            same_day = parse_time(old["timestamp"]).date() == moment.date()
            if old["name"] == score["name"] and same_day:
                score["createdAt"] = old["createdAt"]
                if given_time is None:
                    score["timestamp"] = old["timestamp"]
                self.scores[index] = score
                return score
        positions.append(len(self.scores))
        self.scores.append(score)
        return score

    # ---- dataset runs (SDK 4's POST /api/public/dataset-run-items) ----------------------------
    def add_run_item(self, body: dict[str, Any]) -> dict[str, Any]:
        """Link a trace to a dataset item under a run (created on first use, updated after)."""
        item = self.item(body["datasetItemId"])
        now = iso()
        run = self.runs.setdefault(
            (item["datasetId"], body["runName"]),
            {
                "id": str(uuid.uuid4()),
                "name": body["runName"],
                "description": None,
                "metadata": None,
                "datasetId": item["datasetId"],
                "createdAt": now,
                "updatedAt": now,
                "datasetName": item["datasetName"],
            },
        )
        for key, source in (("description", "runDescription"), ("metadata", "metadata")):
            if body.get(source) is not None:
                run[key] = body[source]
        row = {
            "id": str(uuid.uuid4()),
            "traceId": body.get("traceId"),
            "observationId": body.get("observationId"),
            "datasetRunId": run["id"],
            "datasetRunName": run["name"],
            "datasetItemId": item["id"],
            "createdAt": now,
            "updatedAt": now,
        }
        self.run_items.append(row)
        return row

    def run(self, dataset_name: str, run_name: str) -> dict[str, Any]:
        """Return a dataset run with its items, or raise the server's 404."""
        dataset = self.dataset(dataset_name)
        run = self.runs.get((dataset["id"], run_name))
        if run is None:
            raise ApiProblem(404, "Dataset run not found")
        items = [r for r in self.run_items if r["datasetRunId"] == run["id"]]
        return {**run, "datasetRunItems": sorted(items, key=lambda r: r["createdAt"], reverse=True)}

    # ---- traces and experiments, as the server assembles them from spans -------------------------
    def trace(self, trace_id: str) -> dict[str, Any]:
        """Return a trace built from its spans: the root span's name and times; tags, metadata, version from
        the trace-level attributes any span carries (`langfuse.trace.metadata.<key>`); or raise 404.

        A metadata value is kept as the attribute's text (v4.16 showed SDK 5's `"\\"catchup\\""` with its
        quotes, and SDK 4's JSON text as text), except where the server decodes SDK 5's values (`new`)."""
        spans = [s for s in self.spans if s["traceId"] == trace_id]
        if not spans:
            raise ApiProblem(404, f"Trace {trace_id} not found within authorized project")
        root = next((s for s in spans if s["parentSpanId"] is None), spans[0])
        metadata: dict[str, Any] = {}
        tags: list[str] = []
        version = None
        for span in spans:
            attrs = span["attributes"]
            for key, value in attrs.items():
                if key.startswith("langfuse.trace.metadata."):
                    decoded = _json_value(value) if span.get("decodesMetadata") else value
                    metadata[key.removeprefix("langfuse.trace.metadata.")] = decoded
            if isinstance(attrs.get("langfuse.trace.metadata"), str):
                metadata.update(json.loads(attrs["langfuse.trace.metadata"]))
            tags += [t for t in attrs.get("langfuse.trace.tags", []) if t not in tags]
            version = attrs.get("langfuse.version", version)
        start = min(s["startTimeUnixNano"] for s in spans)
        end = max(s["endTimeUnixNano"] for s in spans)
        return {
            "id": trace_id,
            "projectId": self.project_id,
            "name": root["attributes"].get("langfuse.trace.name", root["name"]),
            "timestamp": iso(dt.datetime.fromtimestamp(root["startTimeUnixNano"] / 1e9, dt.UTC)),
            "environment": root["attributes"].get("langfuse.environment", "default"),
            "tags": tags,
            "bookmarked": False,
            "release": None,
            "version": version,
            "userId": None,
            "sessionId": None,
            "public": False,
            "input": _json_value(root["attributes"].get("langfuse.observation.input")),  # the root's, as v4 shows
            "output": _json_value(root["attributes"].get("langfuse.observation.output")),
            "metadata": metadata,
            "externalId": None,
            "latency": round((end - start) / 1e9, 3),
            "htmlPath": f"/project/{self.project_id}/traces/{trace_id}",
            "totalCost": 0,
        }

    def experiments(self) -> dict[str, dict[str, Any]]:
        """Experiments as the v4 server derives them from span attributes: id → name, description, dataset id,
        item ids.

        This is what the Experiments page and its Dataset column show (SDK 5 writes no dataset run items).
        Its Description column is `any(experiment_description)` over every span of the experiment (events
        table; a span without `langfuse.experiment.description` holds ''), so it shows the description for
        sure only when every span carries it: where the spans differ, `any` may pick an empty one, and the
        fake shows ''.
        """
        found: dict[str, dict[str, Any]] = {}
        for span in self.spans:
            attrs = span["attributes"]
            experiment_id = attrs.get("langfuse.experiment.id")
            if not experiment_id:
                continue
            row = found.setdefault(
                experiment_id,
                {"id": experiment_id, "name": None, "datasetId": None, "itemIds": set(), "descriptions": set()},
            )
            row["name"] = attrs.get("langfuse.experiment.name", row["name"])
            row["datasetId"] = attrs.get("langfuse.experiment.dataset.id", row["datasetId"])
            row["descriptions"].add(attrs.get("langfuse.experiment.description") or "")
            if attrs.get("langfuse.experiment.item.id"):
                row["itemIds"].add(attrs["langfuse.experiment.item.id"])
        for row in found.values():
            descriptions = row.pop("descriptions")
            row["description"] = descriptions.pop() if len(descriptions) == 1 else ""
        return found

    # ---- spans --------------------------------------------------------------------------------
    def find_spans(self, name: str | None = None, **attributes: Any) -> list[dict[str, Any]]:
        """Return stored spans with this name (if given) whose attributes hold these values.

        Attribute keys use `__` for dots: `find_spans(langfuse__experiment__id="abc")`.
        """
        wanted = {key.replace("__", "."): value for key, value in attributes.items()}
        return [
            s
            for s in self.spans
            if name in (None, s["name"]) and all(s["attributes"].get(k) == v for k, v in wanted.items())
        ]
