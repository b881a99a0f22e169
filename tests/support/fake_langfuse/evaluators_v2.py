"""The fake's v2 evaluator and evaluation-rule endpoints (`/api/public/v2/evaluators`, `/evaluation-rules`).

Bodies are checked against the installed SDK's models (`langfuse.api`) and the server's own rules, strictly: an
unknown key anywhere is a 400 `invalid_body` whose `details.issues[]` carry zod's `unrecognized_keys` issue with
the object's `path`. Lists page by an opaque cursor (base64url JSON, newest first, `limit` 1..100, a bad cursor
is a 400). Errors are `{message, code, details?}`; injected faults (`EvaluatorStore.fail_next`) answer 409, 412,
429 (with `details.retryAfterSeconds`) or 500 in that shape. A server at v4.16 or older (the recorded one)
answers these paths with its web 404 page, as one without the API does.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

import pydantic
from langfuse.api.core.pydantic_utilities import parse_obj_as

from .evaluator_store import NO_ASSIGNMENT, V2Problem
from .validation import _wire_names, sdk_model

FIRST_SERVER_WITH_V2 = (4, 17, 0)
"""The fake's line: v4.16 has only the unstable API; the stable one came in a later release (before v4.24)."""
MAX_LIMIT = 100
Issue = dict[str, Any]


def _unknown(parsed: Any, raw: Any, path: list[Any]) -> list[Issue]:
    """zod's `unrecognized_keys` issues for keys of `raw` the parsed model does not know, recursively."""
    if isinstance(parsed, list) and isinstance(raw, list):
        return [
            issue for i, (p, r) in enumerate(zip(parsed, raw, strict=False)) for issue in _unknown(p, r, [*path, i])
        ]
    if not isinstance(parsed, pydantic.BaseModel) or not isinstance(raw, dict):
        return []
    wire = _wire_names(type(parsed))
    issues = [
        {"code": "unrecognized_keys", "keys": [key], "message": f'Unrecognized key: "{key}"', "path": path}
        for key in raw
        if key not in wire
    ]
    for key, attr in wire.items():
        if key in raw:
            issues += _unknown(getattr(parsed, attr), raw[key], [*path, key])
    return issues


def _invalid(issues: list[Issue], where: str = "body") -> V2Problem:
    return V2Problem(400, f"invalid_{where}", f"Invalid request {where}", {"issues": issues})


def checked(model: str, body: Any) -> dict[str, Any]:
    """`body` when the SDK model `model` takes it with no unknown key, else a 400 with the issues."""
    if not isinstance(body, dict):
        raise _invalid([{"code": "invalid_type", "message": "Invalid input: expected object", "path": []}])
    try:
        parsed = parse_obj_as(sdk_model(model), body)
    except pydantic.ValidationError as exc:
        issues = [{"code": e["type"], "message": e["msg"], "path": list(e["loc"])} for e in exc.errors()]
        raise _invalid(issues) from None
    issues = _unknown(parsed, body, [])
    if issues:
        raise _invalid(issues)
    return body


def _issue(path: list[Any], message: str) -> Issue:
    return {"code": "custom", "message": message, "path": path}


def _definition_issues(body: dict[str, Any]) -> list[Issue]:
    """The server's rules for an evaluator body beyond its type (zod refinements in evaluators.ts)."""
    issues = []
    if "name" in body and not str(body["name"]).strip():
        issues.append(_issue(["name"], "String must contain at least 1 character(s)"))
    if len((body.get("description") or "").strip()) > 2000:
        issues.append(_issue(["description"], "String must contain at most 2000 character(s)"))
    if body.get("type") == "code" and not body.get("sourceCode"):
        issues.append(_issue(["sourceCode"], "String must contain at least 1 character(s)"))
    if body.get("type") != "llm_as_judge":
        return issues
    prompt = body.get("prompt")
    if isinstance(prompt, list):
        if not prompt:
            issues.append(_issue(["prompt"], "A prompt needs at least one message"))
        issues += [
            _issue(["prompt", i, "role"], "A system message may only come first")
            for i, m in enumerate(prompt)
            if i > 0 and m["role"] == "system"
        ]
    mapped = [m["variable"] for m in body.get("variableMapping") or []]
    issues += [
        _issue(["variableMapping"], f"Variable {v!r} is mapped twice") for v in set(mapped) if mapped.count(v) > 1
    ]
    issues += [
        _issue(["variableMapping", i, "jsonPath"], "A JSONPath starts with $")
        for i, m in enumerate(body.get("variableMapping") or [])
        if m.get("jsonPath") is not None and not str(m["jsonPath"]).startswith("$")
    ]
    output = body.get("outputDefinition") or {}
    low, high = output.get("minValue"), output.get("maxValue")
    if low is not None and high is not None and low > high:
        issues.append(_issue(["outputDefinition"], "Minimum value must be less than or equal to maximum value"))
    if output.get("dataType") == "CATEGORICAL":
        categories = output.get("categories") or []
        if len(categories) < 2 or any(not str(c).strip() for c in categories):
            issues.append(_issue(["outputDefinition", "categories"], "At least 2 non-empty categories are needed"))
    return issues


def _rule_issues(body: dict[str, Any], *, creating: bool) -> list[Issue]:
    issues = []
    if "name" in body and not str(body["name"]).strip():
        issues.append(_issue(["name"], "String must contain at least 1 character(s)"))
    if "sampling" in body and (body["sampling"] is None or not 0 <= body["sampling"] <= 1):
        issues.append(_issue(["sampling"], "Sampling must be between 0 and 1"))
    assignments = body.get("evaluatorAssignments")
    if assignments is not None and len(assignments) > 100:
        issues.append(_issue(["evaluatorAssignments"], "At most 100 evaluator assignments"))
    if creating and body.get("enabled") and not assignments:
        issues.append(_issue(["evaluatorAssignments"], NO_ASSIGNMENT))
    if not creating and not body:
        issues.append(_issue([], "Request body cannot be empty"))
    return issues


def _refuse(issues: list[Issue]) -> None:
    if issues:
        raise _invalid(issues)


# ---- pagination -------------------------------------------------------------------------------
def _limit(params: dict[str, str], allowed: set[str]) -> int:
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise _invalid(
            [{"code": "unrecognized_keys", "message": f'Unrecognized key: "{unknown[0]}"', "path": []}], "query"
        )
    text = params.get("limit", "50")
    if not text.isdigit() or not 1 <= int(text) <= MAX_LIMIT:
        raise _invalid([_issue(["limit"], f"limit must be an integer from 1 to {MAX_LIMIT}")], "query")
    return int(text)


def _cursor(params: dict[str, str]) -> dict[str, Any] | None:
    text = params.get("cursor")
    if text is None:
        return None
    try:
        cursor = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError):
        raise V2Problem(400, "invalid_query", "Invalid cursor format") from None
    if not isinstance(cursor, dict) or cursor.get("v") != 1:
        raise V2Problem(400, "invalid_query", "Invalid cursor format")
    return cursor


def _encode(cursor: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(cursor).encode()).decode().rstrip("=")


def _page(rows: list[dict[str, Any]], params: dict[str, str]) -> dict[str, Any]:
    """One page of `rows` (newest first by createdAt, then id), after the cursor's row."""
    limit, cursor = _limit(params, {"limit", "cursor"}), _cursor(params)
    ordered = sorted(rows, key=lambda r: (r["createdAt"], r["id"]), reverse=True)
    if cursor is not None:
        if not isinstance(cursor.get("lastCreatedAt"), str) or not isinstance(cursor.get("lastId"), str):
            raise V2Problem(400, "invalid_query", "Invalid cursor format")
        last = (cursor["lastCreatedAt"], cursor["lastId"])
        ordered = [r for r in ordered if (r["createdAt"], r["id"]) < last]
    data, meta = ordered[:limit], {}
    if len(ordered) > limit:
        meta["cursor"] = _encode({"v": 1, "lastCreatedAt": data[-1]["createdAt"], "lastId": data[-1]["id"]})
    return {"data": data, "meta": meta}


def _version(text: str) -> tuple[int, ...]:
    parts = [int(p) for p in text.lstrip("v").split(".")[:3] if p.isdigit()]
    return tuple(parts) if parts else (999,)


# ---- endpoints --------------------------------------------------------------------------------
def _v2(endpoint: Callable[..., tuple[int, Any]]) -> Callable[..., tuple[int, Any]]:
    """Answer like the v2 API: the web 404 on a server without it, injected faults, errors in `{message, code}`."""

    def answer(call: Any, *args: str) -> tuple[int, Any]:
        from .server import NOT_FOUND_PAGE  # server.py imports this module's routes

        if _version(call.server_version) < FIRST_SERVER_WITH_V2:
            return 404, NOT_FOUND_PAGE
        try:
            fault = call.state.evals.take_fault()
            if fault is not None:
                raise fault
            return endpoint(call, *args)
        except V2Problem as problem:
            return problem.status, problem.body

    answer.__doc__ = endpoint.__doc__
    return answer


@_v2
def list_evaluators(call: Any) -> tuple[int, Any]:
    """GET /api/public/v2/evaluators?limit&cursor."""
    evals = call.state.evals
    page = _page([evals.evaluators[i] for i in evals.evaluators], call.params)
    page["data"] = [evals.view(row["id"]) for row in page["data"]]
    return 200, page


@_v2
def create_evaluator(call: Any) -> tuple[int, Any]:
    """POST /api/public/v2/evaluators: a new evaluator at version 1 (201)."""
    body = checked("CreateEvaluatorRequest", call.body)
    _refuse(_definition_issues(body))
    return 201, call.state.evals.create(body)


@_v2
def get_evaluator(call: Any, evaluator_id: str) -> tuple[int, Any]:
    """GET /api/public/v2/evaluators/{id}."""
    return 200, call.state.evals.view(evaluator_id)


@_v2
def patch_evaluator(call: Any, evaluator_id: str) -> tuple[int, Any]:
    """PATCH /api/public/v2/evaluators/{id}: metadata, or a whole definition (a new version)."""
    body = call.body if isinstance(call.body, dict) else {}
    kind = body.get("type")
    model = {"llm_as_judge": "UpdateLlmAsJudgeEvaluatorRequest", "code": "UpdateCodeEvaluatorRequest"}.get(
        kind, "UpdateEvaluatorMetadataRequest"
    )
    checked(model, call.body)
    _refuse(_definition_issues(body) or ([] if body else [_issue([], "Request body cannot be empty")]))
    return 200, call.state.evals.patch(evaluator_id, body)


@_v2
def delete_evaluator(call: Any, evaluator_id: str) -> tuple[int, Any]:
    """DELETE /api/public/v2/evaluators/{id}: all versions and rule assignments; scores stay."""
    call.state.evals.delete(evaluator_id)
    return 200, {"id": evaluator_id}


@_v2
def list_versions(call: Any, evaluator_id: str) -> tuple[int, Any]:
    """GET /api/public/v2/evaluators/{id}/versions?limit&cursor: newest first."""
    limit, cursor = _limit(call.params, {"limit", "cursor"}), _cursor(call.params)
    rows = call.state.evals.version_views(evaluator_id)
    if cursor is not None:
        if not isinstance(cursor.get("version"), int):
            raise V2Problem(400, "invalid_query", "Invalid cursor format")
        rows = [r for r in rows if r["version"] < cursor["version"]]
    meta = {"cursor": _encode({"v": 1, "version": rows[limit - 1]["version"]})} if len(rows) > limit else {}
    return 200, {"data": rows[:limit], "meta": meta}


@_v2
def list_rules(call: Any) -> tuple[int, Any]:
    """GET /api/public/v2/evaluation-rules?limit&cursor."""
    return 200, _page(list(call.state.evals.rules.values()), call.params)


@_v2
def create_rule(call: Any) -> tuple[int, Any]:
    """POST /api/public/v2/evaluation-rules (201)."""
    body = checked("CreateEvaluationRuleRequest", call.body)
    _refuse(_rule_issues(body, creating=True))
    return 201, call.state.evals.create_rule(body)


@_v2
def get_rule(call: Any, rule_id: str) -> tuple[int, Any]:
    """GET /api/public/v2/evaluation-rules/{id}."""
    return 200, call.state.evals.rule(rule_id)


@_v2
def patch_rule(call: Any, rule_id: str) -> tuple[int, Any]:
    """PATCH /api/public/v2/evaluation-rules/{id}: any subset; filter and assignments replaced whole."""
    body = checked("UpdateEvaluationRuleRequest", call.body)
    _refuse(_rule_issues(body, creating=False))
    return 200, call.state.evals.patch_rule(rule_id, body)


@_v2
def delete_rule(call: Any, rule_id: str) -> tuple[int, Any]:
    """DELETE /api/public/v2/evaluation-rules/{id}: evaluators and scores stay."""
    call.state.evals.delete_rule(rule_id)
    return 200, {"id": rule_id}


PATHS: list[tuple[str, dict[str, Callable[..., tuple[int, Any]]]]] = [
    ("/api/public/v2/evaluators", {"GET": list_evaluators, "POST": create_evaluator}),
    ("/api/public/v2/evaluators/{}", {"GET": get_evaluator, "PATCH": patch_evaluator, "DELETE": delete_evaluator}),
    ("/api/public/v2/evaluators/{}/versions", {"GET": list_versions}),
    ("/api/public/v2/evaluation-rules", {"GET": list_rules, "POST": create_rule}),
    ("/api/public/v2/evaluation-rules/{}", {"GET": get_rule, "PATCH": patch_rule, "DELETE": delete_rule}),
]
"""The routes, added to the fake's table by one line of endpoints.py."""
