"""The fake runs evaluation rules: each observation that arrives is scored by every enabled rule that matches it.

Like Langfuse, a rule runs the LATEST version of each assigned evaluator (no pinning), so a definition PATCH
reaches the next matching observation at once, while a new evaluator reaches it only once a rule's assignment
points at it. A rule admits an observation when every filter matches (`filter_matches`) and the sampling takes
it (`sampled`: a fixed fraction of the rule and observation ids, so a test knows which are taken). The judge is
not a model: `judge_value` is a fixed function of the trace id and the evaluator version, so a test can tell
which version wrote a score. The score is named by the evaluator's `name` (the API has no separate score name),
has `source: EVAL` and the metadata a server-side judge writes (`evalExecutionMetadata.ts`).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .storage import State

_SPACE = 2**32


def _fraction(*parts: str) -> int:
    return int(hashlib.sha256(":".join(parts).encode()).hexdigest()[:8], 16)


def sampled(rule_id: str, observation_id: str, sampling: float) -> bool:
    """Whether a rule with `sampling` takes this observation: a fixed fraction of the two ids below it."""
    return _fraction(rule_id, observation_id) < sampling * _SPACE


def judge_value(trace_id: str, version: dict[str, Any]) -> tuple[float | str, str]:
    """(value, dataType) the fake's judge gives a trace under one evaluator version: a fixed function of both.

    NUMERIC: an integer in [minValue, maxValue] (default [0, 1]) when both are whole, else a fraction of the range;
    BOOLEAN: 0 or 1; CATEGORICAL: one category; a code evaluator: NUMERIC 0 or 1.
    """
    h = _fraction(trace_id, version["id"])
    output = version.get("outputDefinition") or {"dataType": "NUMERIC", "minValue": 0, "maxValue": 1}
    kind = output["dataType"]
    if kind == "BOOLEAN":
        return h % 2, kind
    if kind == "CATEGORICAL":
        return output["categories"][h % len(output["categories"])], kind
    low, high = output.get("minValue", 0), output.get("maxValue", 1)
    low, high = (0, 1) if low is None or high is None else (low, high)
    if float(low).is_integer() and float(high).is_integer():
        return int(low) + h % (int(high) - int(low) + 1), kind
    return round(low + (h / _SPACE) * (high - low), 3), kind


def observation(state: State, span: dict[str, Any]) -> dict[str, Any]:
    """An arriving span as a rule's filter sees it: its own attributes over its trace's root span's."""
    roots = [s for s in state.spans if s["traceId"] == span["traceId"] and s["parentSpanId"] is None]
    attrs = {**(roots[-1]["attributes"] if roots else {}), **span["attributes"]}
    metadata = {}
    for key, value in attrs.items():
        for prefix in ("langfuse.trace.metadata.", "langfuse.observation.metadata."):
            if key.startswith(prefix):
                metadata[key[len(prefix) :]] = value
    is_root = span["parentSpanId"] is None
    return {
        "type": attrs.get("langfuse.observation.type") or "span",
        "name": span["name"],
        "traceName": attrs.get("langfuse.trace.name") or (roots[-1]["name"] if roots else span["name"]),
        "environment": attrs.get("langfuse.environment") or "default",
        "level": attrs.get("langfuse.observation.level") or "DEFAULT",
        "version": attrs.get("langfuse.version"),
        "userId": attrs.get("user.id"),
        "sessionId": attrs.get("session.id"),
        "tags": list(attrs.get("langfuse.trace.tags") or []),
        "metadata": metadata,
        "isRootObservation": is_root,
        "isExperimentItemRootSpan": bool(attrs.get("langfuse.experiment.item.id")) and is_root,
        "datasetId": attrs.get("langfuse.experiment.dataset.id"),
        "experimentId": attrs.get("langfuse.experiment.id"),
        "datasetItemId": attrs.get("langfuse.experiment.item.id"),
    }


def _string_matches(value: Any, operator: str, wanted: Any) -> bool:
    text, want = "" if value is None else str(value), str(wanted)
    tests = {
        "=": text == want,
        "contains": want in text,
        "does not contain": want not in text,
        "starts with": text.startswith(want),
        "ends with": text.endswith(want),
    }
    return tests.get(operator, False)


def filter_matches(seen: dict[str, Any], condition: dict[str, Any]) -> bool:
    """Whether one filter condition holds for an observation; a column or operator the fake lacks never does."""
    kind, operator, wanted = condition["type"], condition["operator"], condition.get("value")
    value = seen.get(condition["column"])
    if kind == "stringObject":
        return _string_matches((value or {}).get(condition.get("key")), operator, wanted)
    if kind == "string":
        return _string_matches(value, operator, wanted)
    if kind in ("stringOptions", "categoryOptions"):
        return {"any of": value in wanted, "none of": value not in wanted}.get(operator, False)
    if kind == "arrayOptions":
        held, want = set(value or ()), set(wanted or ())
        return {"any of": bool(held & want), "all of": want <= held, "none of": not held & want}.get(operator, False)
    if kind == "boolean":
        return {"=": value is wanted, "<>": value is not wanted}.get(operator, False)
    if kind == "null":
        return {"is null": value is None, "is not null": value is not None}.get(operator, False)
    return False


def run_rules(state: State, spans: list[dict[str, Any]]) -> None:
    """Score the arriving spans with every enabled rule whose filter and sampling admit them."""
    evals = state.evals
    for span in spans:
        seen = observation(state, span)
        for rule in list(evals.rules.values()):
            if not rule["enabled"] or not all(filter_matches(seen, c) for c in rule["filter"]):
                continue
            if not sampled(rule["id"], span["spanId"], rule["sampling"]):
                continue
            for assignment in rule["evaluatorAssignments"]:
                _score(state, rule, assignment["evaluatorId"], span, seen)


def _score(state: State, rule: dict[str, Any], evaluator_id: str, span: dict[str, Any], seen: dict[str, Any]) -> None:
    evals = state.evals
    evaluator, version = evals.evaluators[evaluator_id], evals.latest(evaluator_id)
    assignment_id = evals.assignment_ids[(rule["id"], evaluator_id)]
    if version["type"] == "code":
        results = _code_scores(version, span)
    else:
        value, data_type = judge_value(span["traceId"], version)
        results = [(evaluator["name"], value, data_type, f"fake judge, evaluator version {version['version']}")]
    metadata = {
        "evaluator_id": evaluator_id,
        "evaluator_version_id": version["id"],
        "evaluation_rule_id": rule["id"],
        "evaluation_rule_assignment_id": assignment_id,
        "job_execution_id": str(uuid.uuid4()),
        "job_configuration_id": rule["id"],
        "target_trace_id": span["traceId"],
        "target_observation_id": span["spanId"],
        "target_dataset_item_id": seen["datasetItemId"],
    }
    for name, value, data_type, comment in results:
        state.add_score(
            {
                "id": str(
                    uuid.uuid5(
                        uuid.NAMESPACE_URL,
                        f"{assignment_id}/{span['spanId']}" + (f"/{name}" if len(results) > 1 else ""),
                    )
                ),
                "traceId": span["traceId"],
                "observationId": span["spanId"],
                "name": name,
                "value": value,
                "dataType": data_type,
                "source": "EVAL",
                "comment": comment,
                "metadata": metadata,
                "environment": seen["environment"],
            }
        )


def _code_scores(version: dict[str, Any], span: dict[str, Any]) -> list[tuple[str, Any, str, str | None]]:
    """A code evaluator's scores of one span (none when its execution fails; the error is kept on the version)."""
    from .code_runner import run_code
    from .storage import _json_value

    attrs = span["attributes"]
    observation = {
        key: _json_value(attrs.get(f"langfuse.observation.{key}")) for key in ("input", "output", "metadata")
    }
    scores = run_code(version["sourceCode"], observation)
    if isinstance(scores, str):
        version.setdefault("_errors", []).append(scores)
        return []
    return [(s.name, s.value, s.data_type, s.comment) for s in scores]
