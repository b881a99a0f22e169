"""Rule files (`rules/*.yaml`) as Langfuse evaluation rules: plan, apply, and the traffic each one would score.

A rule is found on the server by its name, `<file name> [scoregate]` (rules have no description to mark). Its
assignments point at the file's LIVE evaluator of each judge: the one the rule already points at (blue) stays,
even when the judge file has changed since (that move is a promotion, not an apply); a judge new to the rule gets
the evaluator holding the file's current definition. The recent traffic a rule would score is counted by the
server itself: the observations of the last days that match the rule's own filter (`GET /api/public/v2/observations`
with `filter` and `fromStartTime`).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from scoregate.catalog.judge_rules import RuleSpec
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.canonical import canonical
from scoregate.integrations.langfuse.evaluators_api import RULES, EvaluatorGone, EvaluatorsApi
from scoregate.integrations.langfuse.evaluators_body import read_marker
from scoregate.support.suggest import did_you_mean

if TYPE_CHECKING:
    from scoregate.analysis.forecast import Forecast

RuleAction = Literal["create", "update", "unchanged", "disable"]
MARK = " [scoregate]"
TRAFFIC_DAYS = 7
TRAFFIC_PAGES = 20
TRAFFIC_PAGE = 1000
"""Observations a page (the v2 observations API's most)."""
OBSERVATIONS = "/api/public/v2/observations"


def server_name(spec: RuleSpec) -> str:
    """The rule's name in Langfuse: the file's name and the mark that scoregate keeps it."""
    return f"{spec.name}{MARK}"


def rule_filter(spec: RuleSpec, dataset_id: str | None) -> list[dict[str, Any]]:
    """The rule file's filter in Langfuse's filter conditions."""
    wanted = spec.filter
    out: list[dict[str, Any]] = []
    for column, values in (("traceName", wanted.trace_name), ("environment", wanted.environment)):
        if values:
            out.append({"type": "stringOptions", "column": column, "operator": "any of", "value": list(values)})
    if wanted.tags:
        out.append({"type": "arrayOptions", "column": "tags", "operator": "any of", "value": list(wanted.tags)})
    for key, value in sorted(wanted.metadata.items()):
        out.append({"type": "stringObject", "column": "metadata", "key": key, "operator": "=", "value": value})
    if wanted.experiment_dataset is not None:
        out.append({"type": "boolean", "column": "isExperimentItemRootSpan", "operator": "=", "value": True})
        out.append({"type": "stringOptions", "column": "datasetId", "operator": "any of", "value": [dataset_id]})
    return out


@dataclass
class RulePlan:
    """What apply does to one rule, with the judges it runs and (from the forecast) what it would cost a day."""

    name: str
    action: RuleAction
    enabled: bool
    sampling: float
    judges: list[str]
    rule_id: str | None = None
    changes: list[str] = field(default_factory=list)
    assignments: dict[str, str | None] = field(default_factory=dict)
    """Judge file → the evaluator it points at (None: the one `judges apply` creates first)."""
    filter: list[dict[str, Any]] = field(default_factory=list)
    traces_per_day: float | None = None
    """Matching observations a day over the last TRAFFIC_DAYS days (before sampling)."""
    capped: bool = False
    """The count stopped at TRAFFIC_PAGES pages: the traffic is at least this."""
    cost: Forecast | None = None
    """The calls and cost a day (set by the use case's forecast)."""
    orphan: str | None = None
    """The rule file this server rule came from, when it is gone (renamed or deleted): apply disables the rule and
    never deletes it."""

    @property
    def writes(self) -> int:
        """Requests that change the server."""
        return 0 if self.action == "unchanged" else 1


def dataset_id(api: EvaluatorsApi, name: str, where: str) -> str:
    """The Langfuse id of dataset `name` (a rule scoped to its experiment items filters on it)."""
    missing = ScoregateError(
        f"filter.experiment_dataset: no dataset {name!r} in Langfuse", where=where,
        hint=f"sync it first (`scoregate datasets sync {name}`), or correct the name",
    )  # fmt: skip
    try:
        answer = api.v2(f"reading dataset {name!r}", "GET", f"/api/public/v2/datasets/{name}")
    except EvaluatorGone:
        raise missing from None
    if not isinstance(answer, dict) or not answer.get("id"):
        raise missing
    return str(answer["id"])


def _by_file(evaluators: list[dict[str, Any]]) -> dict[str, str]:
    return {e["id"]: (read_marker(e.get("description")) or ("", ""))[0] for e in evaluators}


def plan_rule(
    spec: RuleSpec,
    filter: list[dict[str, Any]],
    current: dict[str, str | None],
    server_rules: list[dict[str, Any]],
    evaluators: list[dict[str, Any]],
) -> RulePlan:
    """Compare one rule file with its rule in Langfuse; `current` maps each judge file to the evaluator holding its
    current definition (None: to be created)."""
    name = server_name(spec)
    found = sorted((r for r in server_rules if r["name"] == name), key=lambda r: (str(r["createdAt"]), r["id"]))
    plan = RulePlan(name, "create", spec.enabled, spec.sampling, list(spec.judges), filter=filter)
    files = _by_file(evaluators)
    held = {
        files.get(a["evaluatorId"], ""): a["evaluatorId"] for a in (found[0]["evaluatorAssignments"] if found else [])
    }
    plan.assignments = {judge: held.get(judge) or current[judge] for judge in spec.judges}
    if not found:
        return plan
    rule = found[0]
    plan.rule_id, plan.action = rule["id"], "unchanged"
    if rule["enabled"] != spec.enabled:
        plan.changes.append("enabled" if spec.enabled else "disabled")
    if rule["sampling"] != spec.sampling:
        plan.changes.append(f"sampling {rule['sampling']:g} → {spec.sampling:g}")
    if canonical(rule["filter"]) != canonical(filter):
        plan.changes.append("filter")
    if [a["evaluatorId"] for a in rule["evaluatorAssignments"]] != list(plan.assignments.values()):
        plan.changes.append("judges")
    if plan.changes:
        plan.action = "update"
    return plan


def count_traffic(api: EvaluatorsApi, plan: RulePlan, now: dt.datetime | None = None) -> None:
    """Set the plan's matching observations a day, counted by the server over the last TRAFFIC_DAYS days."""
    since = (now or dt.datetime.now(dt.UTC)) - dt.timedelta(days=TRAFFIC_DAYS)
    recent = {"type": "datetime", "column": "startTime", "operator": ">=", "value": since.isoformat()}
    # the time goes inside `filter` too: when `filter` is given, the query's own filter parameters may be ignored
    params: dict[str, Any] = {
        "fromStartTime": since.isoformat(),
        "filter": json.dumps([*plan.filter, recent]),
        "limit": TRAFFIC_PAGE,
    }
    seen = 0
    for _ in range(TRAFFIC_PAGES):
        answer = api.v2(f"counting the traffic of rule {plan.name!r}", "GET", OBSERVATIONS, params=params)
        rows = answer.get("data") or []
        seen += len(rows)
        cursor = (answer.get("meta") or {}).get("cursor")
        if not cursor:  # the last page, full or not: the count is exact
            break
        params["cursor"] = cursor
    else:
        plan.capped = True
    plan.traces_per_day = seen / TRAFFIC_DAYS


def orphan_rules(rules: dict[str, RuleSpec], server_rules: list[dict[str, Any]]) -> list[RulePlan]:
    """The project's rules in Langfuse (named `... [scoregate]`) whose rule file is gone: each to disable (or already
    disabled), never to delete, so a renamed or deleted file stops scoring but its rule and scores stay."""
    wanted = {server_name(spec) for spec in rules.values()}
    plans = []
    for rule in sorted(server_rules, key=lambda r: (r["name"], str(r["createdAt"]), r["id"])):
        name = rule["name"]
        if not name.endswith(MARK) or name in wanted:
            continue
        action: RuleAction = "disable" if rule["enabled"] else "unchanged"
        plan = RulePlan(name, action, False, rule["sampling"], [], rule_id=rule["id"], filter=rule["filter"])
        plan.orphan = f"rules/{name.removesuffix(MARK)}.yaml"
        plan.changes = ["no rule file"]
        plans.append(plan)
    return plans


def apply_rule(plan: RulePlan, api: EvaluatorsApi, created: dict[str, str]) -> None:
    """Create or update one rule; `created` maps a judge file to the evaluator `judges apply` just made."""
    if plan.orphan is not None:
        if plan.action == "disable":
            api.v2(f"disabling rule {plan.name!r}", "PATCH", f"{RULES}/{plan.rule_id}", json={"enabled": False})
        return
    plan.assignments = {judge: plan.assignments[judge] or created[judge] for judge in plan.judges}
    assignments = [{"evaluatorId": plan.assignments[judge], "variableMapping": None} for judge in plan.judges]
    body = {
        "name": plan.name,
        "enabled": plan.enabled,
        "sampling": plan.sampling,
        "filter": plan.filter,
        "evaluatorAssignments": assignments,
    }
    if plan.action == "create":
        plan.rule_id = api.v2(f"creating rule {plan.name!r}", "POST", RULES, json=body)["id"]
    elif plan.action == "update":
        api.v2(f"updating rule {plan.name!r}", "PATCH", f"{RULES}/{plan.rule_id}", json=body)


def plan_rules(
    rules: dict[str, RuleSpec],
    live: dict[str, str | None],
    not_live: dict[str, str],
    api: EvaluatorsApi,
    *,
    prune: bool = True,
) -> list[RulePlan]:
    """Plan every rule file against the project's rules and count the traffic each would score; reads only.

    `live` maps each live judge file to the evaluator holding its current definition (None: to be created);
    `not_live` maps the other evaluator files to why they stay with `scoregate run`. With `prune`, the project's
    rules whose file is gone are planned too (`orphan_rules`).
    """
    if not rules and not prune:
        return []
    server_rules = list(api.every("listing the evaluation rules", RULES))
    evaluators = api.evaluators()
    datasets: dict[str, str] = {}
    plans = []
    for name, spec in sorted(rules.items()):
        where = f"rules/{name}.yaml"
        for judge in spec.judges:
            if judge not in live:
                why = not_live.get(judge, "there is no such evaluator file")
                hint = did_you_mean(judge, live) or f"the judges a rule can name: {', '.join(sorted(live)) or 'none'}"
                raise ScoregateError(f"judges: {judge!r} cannot run in Langfuse: {why}", where=where, hint=hint)
        dataset = spec.filter.experiment_dataset
        if dataset is not None and dataset not in datasets:
            datasets[dataset] = dataset_id(api, dataset, where)
        conditions = rule_filter(spec, datasets.get(dataset) if dataset else None)
        plan = plan_rule(spec, conditions, {j: live[j] for j in spec.judges}, server_rules, evaluators)
        count_traffic(api, plan)
        plans.append(plan)
    return plans + (orphan_rules(rules, server_rules) if prune else [])
