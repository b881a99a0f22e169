"""Which evaluator of a judge file is live (blue) and which holds the file now (green), what blue scored, and the
one move between them: repointing the rules' assignments.

Blue is what the rules point at: the evaluators of the file (by their description's marker) that some rule's
assignment names. Green is the evaluator holding the file's current definition (`judges apply` made it). A move
replaces, in every rule that points at the `from` evaluators, that assignment by one to the `to` evaluator, in
place and keeping its variable mapping; PATCH replaces the whole list, so a move sent twice leaves one
assignment, and a move killed half-way is finished by running it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.evaluators_api import RULES, EvaluatorsApi
from scoregate.integrations.langfuse.evaluators_body import JudgeBody, read_marker
from scoregate.integrations.langfuse.evaluators_sync import plan_judge

SCORES = "/api/public/v3/scores"


@dataclass
class LiveJudge:
    """One judge file on the server: green, blue, and the rules that point at blue."""

    file: str
    score: str
    green: str | None
    """The evaluator holding the file's current definition (None: `judges apply` has not made it yet)."""
    blue: list[str]
    rules: list[dict[str, Any]]
    """The rules with an assignment to one of the file's evaluators."""
    evaluators: dict[str, dict[str, Any]]


def live_judge(api: EvaluatorsApi, body: JudgeBody) -> LiveJudge:
    """Find a judge file's green and blue evaluators and the rules that run it."""
    api.probe()
    server = api.evaluators()
    ours = {e["id"]: e for e in server if (read_marker(e.get("description")) or ("", ""))[0] == body.file}
    plan = plan_judge(body, server)
    green = plan.evaluator_id if plan.action in ("unchanged", "describe") else None
    rules = [
        rule
        for rule in api.every("listing the evaluation rules", RULES)
        if any(a["evaluatorId"] in ours for a in rule["evaluatorAssignments"])
    ]
    blue = list(
        dict.fromkeys(a["evaluatorId"] for r in rules for a in r["evaluatorAssignments"] if a["evaluatorId"] in ours)
    )
    return LiveJudge(body.file, body.body["name"], green, blue, rules, ours)


def blue_scores(api: EvaluatorsApi, judge: LiveJudge, last: int) -> list[dict[str, Any]]:
    """The newest `last` scores the blue evaluators wrote (one per trace), newest first."""
    found: dict[str, dict[str, Any]] = {}
    cursor = None
    while len(found) < last:
        params = {"name": judge.score, "source": "EVAL", "fields": "details,subject", "limit": 100}
        answer = api.v2(
            f"reading the scores of {judge.score!r}",
            "GET",
            SCORES,
            params={**params, **({"cursor": cursor} if cursor else {})},
        )
        for score in answer.get("data") or []:
            trace = (score.get("subject") or {}).get("traceId") or (score.get("subject") or {}).get("id")
            if (score.get("metadata") or {}).get("evaluator_id") in judge.blue and trace and trace not in found:
                found[trace] = score
        cursor = (answer.get("meta") or {}).get("cursor")
        if not cursor:
            break
    return list(found.values())[:last]


def trace_io(api: EvaluatorsApi, trace_id: str) -> dict[str, Any]:
    """A trace's input, output and metadata, as the judge reads them."""
    trace = api.v2(f"reading trace {trace_id}", "GET", f"/api/public/traces/{trace_id}")
    return {"input": trace.get("input"), "output": trace.get("output"), "metadata": trace.get("metadata") or {}}


def repoint(api: EvaluatorsApi, judge: LiveJudge, sources: list[str], target: str) -> list[str]:
    """Point every rule's assignment to one of `sources` at `target` instead; return the ids of the rules changed."""
    if target not in judge.evaluators:
        raise ScoregateError(f"evaluator {target} of {judge.file} is no longer in Langfuse (deleted there?)")
    changed = []
    for rule in judge.rules:
        assignments, seen = [], False
        for assignment in rule["evaluatorAssignments"]:
            if assignment["evaluatorId"] in sources or assignment["evaluatorId"] == target:
                if not seen:
                    assignments.append({"evaluatorId": target, "variableMapping": assignment.get("variableMapping")})
                seen = True
            else:
                assignments.append(
                    {"evaluatorId": assignment["evaluatorId"], "variableMapping": assignment.get("variableMapping")}
                )
        if [a["evaluatorId"] for a in assignments] != [a["evaluatorId"] for a in rule["evaluatorAssignments"]]:
            doing = f"pointing rule {rule['name']!r} at evaluator {target}"
            api.v2(doing, "PATCH", f"{RULES}/{rule['id']}", json={"evaluatorAssignments": assignments})
            changed.append(rule["id"])
    return changed
