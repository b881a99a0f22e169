"""What the fake keeps of Langfuse's v2 evaluators and evaluation rules, and the server rules it applies.

Read from Langfuse's definitions (shared/notes/langfuse-v2-evaluators.md names them): every POST makes a new
evaluator at version 1; a PATCH carrying a definition (`type` and the rest) makes a new version, a PATCH of
`name`/`description` alone does not; an evaluator's `type` cannot change; DELETE of an evaluator removes all its
versions and its rule assignments (a rule left with none is disabled) and keeps its scores; a rule always runs
the latest version of each assigned evaluator. What the definitions leave open, the fake decides and says so:
a definition PATCH identical to the latest version still makes a new version; changing `type` is a 409; a rule
naming an evaluator that does not exist is a 404. A missing LLM connection is a 412: an `llm_as_judge` evaluator
whose `modelConfig.provider` is not in `llm_providers` (default `openai`, `anthropic`) is refused.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from .storage import iso

DEFINITION_KEYS = {
    "llm_as_judge": ("prompt", "variableMapping", "modelConfig", "outputDefinition"),
    "code": ("sourceCode", "sourceCodeLanguage"),
}


class V2Problem(Exception):
    """An error answer of the v2 evaluator API: `{message, code, details?}` with its HTTP status."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body: dict[str, Any] = {"message": message, "code": code}
        if details is not None:
            self.body["details"] = details


def not_found(what: str) -> V2Problem:
    """The 404 of an evaluator or rule id the project does not hold."""
    return V2Problem(404, "resource_not_found", f"{what} not found")


@dataclass
class InjectedProblem:
    """A fault the next matching requests answer with, in the API's own error body."""

    status: int
    times: int
    retry_after_s: int = 30


NO_ASSIGNMENT = "An enabled evaluation rule requires at least one evaluator assignment"
_CODES = {409: "conflict", 412: "invalid_request", 429: "rate_limited", 500: "internal_error"}
_MESSAGES = {
    409: "The request conflicts with the current evaluator state",
    412: "The evaluator configuration cannot be used in its current form",
    429: "Rate limit exceeded",
    500: "Internal server error",
}


def injected_body(problem: InjectedProblem) -> V2Problem:
    """The error an injected fault answers; a 429 carries `retryAfterSeconds`, `limit`, `remaining`, `resetAt`."""
    details = None
    if problem.status == 429:
        reset = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=problem.retry_after_s)
        details = {"retryAfterSeconds": problem.retry_after_s, "limit": 1000, "remaining": 0, "resetAt": iso(reset)}
    return V2Problem(problem.status, _CODES.get(problem.status, "internal_error"), _MESSAGES[problem.status], details)


def _version_view(version: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in version.items() if not k.startswith("_")}


@dataclass
class EvaluatorStore:
    """The project's evaluators (each with its versions, oldest first) and rules, in API shape."""

    evaluators: dict[str, dict[str, Any]] = field(default_factory=dict)
    versions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    assignment_ids: dict[tuple[str, str], str] = field(default_factory=dict)
    """(rule id, evaluator id) → the assignment's id, which a server-side judge's score names in its metadata."""
    llm_providers: set[str] = field(default_factory=lambda: {"openai", "anthropic"})
    """The providers the project has an LLM connection for; an evaluator naming another is a 412."""
    faults: list[InjectedProblem] = field(default_factory=list)

    # ---- faults -------------------------------------------------------------------------------
    def fail_next(self, status: int, *, times: int = 1, retry_after_s: int = 30) -> None:
        """Answer the next `times` v2 evaluator or rule requests with `status` (409, 412, 429 or 500)."""
        if status not in _MESSAGES:
            raise ValueError(f"the fake injects 409, 412, 429 or 500, not {status}")
        self.faults.append(InjectedProblem(status, times, retry_after_s))

    def take_fault(self) -> V2Problem | None:
        """The injected fault this request answers with, if one is left."""
        for fault in self.faults:
            if fault.times > 0:
                fault.times -= 1
                return injected_body(fault)
        return None

    # ---- evaluators ---------------------------------------------------------------------------
    def _check_model(self, definition: dict[str, Any]) -> None:
        config = definition.get("modelConfig")
        if definition["type"] == "llm_as_judge" and config and config["provider"] not in self.llm_providers:
            raise V2Problem(
                412,
                "invalid_request",
                f"No LLM connection found for provider {config['provider']!r}; add one in the project settings",
            )

    def _new_version(self, evaluator_id: str, body: dict[str, Any]) -> dict[str, Any]:
        kind = body["type"]
        version = {
            "id": str(uuid.uuid4()),
            "version": len(self.versions.get(evaluator_id, [])) + 1,
            "createdAt": iso(),
            "createdBy": None,
            "type": kind,
        }
        for key in DEFINITION_KEYS[kind]:
            version[key] = body.get(key)
        if kind == "llm_as_judge":
            version["prompt"] = chat_prompt(body["prompt"])
            version["variables"] = prompt_variables(version["prompt"])
        self.versions.setdefault(evaluator_id, []).append(version)
        return version

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST: a new evaluator at version 1."""
        self._check_model(body)
        now, evaluator_id = iso(), str(uuid.uuid4())
        self.evaluators[evaluator_id] = {
            "id": evaluator_id,
            "name": body["name"].strip(),
            "description": (body.get("description") or "").strip() or None,
            "createdBy": None,
            "status": "active",
            "pausedAt": None,
            "pausedReason": None,
            "pausedMessage": None,
            "createdAt": now,
            "updatedAt": now,
        }
        self._new_version(evaluator_id, body)
        return self.view(evaluator_id)

    def get(self, evaluator_id: str) -> dict[str, Any]:
        """The evaluator with its latest version's definition, or a 404."""
        if evaluator_id not in self.evaluators:
            raise not_found("Evaluator")
        return self.evaluators[evaluator_id]

    def latest(self, evaluator_id: str) -> dict[str, Any]:
        """The latest version of an evaluator (what every rule runs)."""
        self.get(evaluator_id)
        return self.versions[evaluator_id][-1]

    def view(self, evaluator_id: str) -> dict[str, Any]:
        """The evaluator as GET answers it: its fields, its latest definition, its rule assignments."""
        latest = self.latest(evaluator_id)
        assignments = [
            {"evaluationRuleId": rule["id"], "variableMappingOverride": a["variableMapping"]}
            for rule in sorted(self.rules.values(), key=lambda r: r["createdAt"], reverse=True)
            for a in rule["evaluatorAssignments"]
            if a["evaluatorId"] == evaluator_id
        ]
        definition = {k: v for k, v in _version_view(latest).items() if k not in ("id", "createdAt", "createdBy")}
        return {
            **self.evaluators[evaluator_id],
            **definition,
            "evaluationRuleAssignments": assignments,
            "versionId": latest["id"],
            "versionCreatedAt": latest["createdAt"],
            "versionCreatedBy": None,
        }

    def patch(self, evaluator_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """PATCH: metadata alone changes no version; a definition (with `type`) is a new version."""
        evaluator = self.get(evaluator_id)
        if "type" in body:
            if body["type"] != self.latest(evaluator_id)["type"]:
                raise V2Problem(409, "conflict", "An evaluator's type cannot be changed; create a new evaluator")
            self._check_model(body)
            self._new_version(evaluator_id, body)
        if "name" in body:
            evaluator["name"] = body["name"].strip()
        if "description" in body:
            evaluator["description"] = (body["description"] or "").strip() or None
        evaluator["updatedAt"] = iso()
        return self.view(evaluator_id)

    def delete(self, evaluator_id: str) -> None:
        """DELETE: the evaluator, all its versions and its assignments go; a rule left with none is disabled."""
        self.get(evaluator_id)
        del self.evaluators[evaluator_id]
        del self.versions[evaluator_id]
        for rule in self.rules.values():
            kept = [a for a in rule["evaluatorAssignments"] if a["evaluatorId"] != evaluator_id]
            if len(kept) != len(rule["evaluatorAssignments"]):
                rule["evaluatorAssignments"] = kept
                rule["enabled"] = rule["enabled"] and bool(kept)
                rule["updatedAt"] = iso()
                self.assignment_ids.pop((rule["id"], evaluator_id), None)

    def version_views(self, evaluator_id: str) -> list[dict[str, Any]]:
        """Every version, newest first."""
        self.get(evaluator_id)
        return [_version_view(v) for v in reversed(self.versions[evaluator_id])]

    # ---- rules --------------------------------------------------------------------------------
    def _assignments(self, rule_id: str, given: list[dict[str, Any]]) -> list[dict[str, Any]]:
        assignments = []
        for entry in given:
            if entry["evaluatorId"] not in self.evaluators:
                raise not_found(f"Evaluator {entry['evaluatorId']}")
            assignments.append({"evaluatorId": entry["evaluatorId"], "variableMapping": entry.get("variableMapping")})
            self.assignment_ids.setdefault((rule_id, entry["evaluatorId"]), str(uuid.uuid4()))
        return assignments

    def create_rule(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST: a new rule (sampling 1 and no filter unless given)."""
        now, rule_id = iso(), str(uuid.uuid4())
        rule = {
            "id": rule_id,
            "name": body["name"].strip(),
            "createdBy": None,
            "enabled": body["enabled"],
            "sampling": body.get("sampling", 1),
            "filter": body.get("filter") or [],
            "evaluatorAssignments": self._assignments(rule_id, body["evaluatorAssignments"]),
            "createdAt": now,
            "updatedAt": now,
        }
        self.rules[rule_id] = rule
        return rule

    def rule(self, rule_id: str) -> dict[str, Any]:
        """The rule, or a 404."""
        if rule_id not in self.rules:
            raise not_found("Evaluation rule")
        return self.rules[rule_id]

    def patch_rule(self, rule_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """PATCH: any subset; `filter` and `evaluatorAssignments` are replaced whole; no assignment disables it."""
        rule = self.rule(rule_id)
        assignments = rule["evaluatorAssignments"]
        if "evaluatorAssignments" in body:
            assignments = self._assignments(rule_id, body["evaluatorAssignments"])
        enabled = body.get("enabled", rule["enabled"]) and bool(assignments)
        if body.get("enabled") and not assignments:
            raise V2Problem(
                400,
                "invalid_body",
                "Invalid request body",
                {"issues": [{"code": "custom", "message": NO_ASSIGNMENT, "path": ["evaluatorAssignments"]}]},
            )
        for key in ("name", "sampling", "filter"):
            if key in body:
                rule[key] = body[key].strip() if key == "name" else body[key]
        kept = {a["evaluatorId"] for a in assignments}
        for key in [k for k in self.assignment_ids if k[0] == rule_id and k[1] not in kept]:
            del self.assignment_ids[key]
        rule.update(evaluatorAssignments=assignments, enabled=enabled, updatedAt=iso())
        return rule

    def delete_rule(self, rule_id: str) -> None:
        """DELETE: the rule goes; its evaluators and their scores stay."""
        self.rule(rule_id)
        del self.rules[rule_id]
        for key in [k for k in self.assignment_ids if k[0] == rule_id]:
            del self.assignment_ids[key]


def chat_prompt(prompt: Any) -> list[dict[str, str]]:
    """A prompt as responses hold it: a plain string becomes one user message."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [{"role": m["role"], "content": m["content"]} for m in prompt]


def prompt_variables(messages: list[dict[str, str]]) -> list[str]:
    """The `{{variable}}` names of the messages, in first-use order."""
    found = [name for m in messages for name in re.findall(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}", m["content"])]
    return list(dict.fromkeys(found))
