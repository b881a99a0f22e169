"""`scoregate judges plan` / `apply`: the project's judge files as Langfuse evaluators and its rule files as
evaluation rules (the v2 API), each rule's cost a day forecast and held to the budget before it is enabled.

Order: probe the server (one line without the v2 API), plan the judges, plan the rules and count the traffic
each would score, forecast, refuse a rule over budget (unless `--force --reason`, kept in `judges.jsonl`), then
apply: the judges first (a rule may point at an evaluator just made), then the rules. Nothing is written before
every check has passed.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoregate.catalog.project import Project
    from scoregate.integrations.langfuse.evaluators_sync import JudgeSyncReport

JUDGES_LOG = "judges.jsonl"
"""The audit of forced judge moves, beside promotions.jsonl."""


def append_judge_record(root: Path, record: dict[str, Any]) -> None:
    """Append one audit record (with who and when) to the project's judges.jsonl."""
    stamped = {
        **record,
        "user": os.environ.get("SCOREGATE_USER") or getpass.getuser(),
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    with (root / JUDGES_LOG).open("a", encoding="utf-8") as log:
        log.write(json.dumps(stamped, ensure_ascii=False, sort_keys=True, default=str) + "\n")


def sync_project_judges(
    root: Path, names: Sequence[str] = (), *, dry_run: bool = False, force: bool = False, reason: str | None = None
) -> JudgeSyncReport:
    """Plan each judge and rule file of the project against Langfuse; unless `dry_run`, create the new evaluators (a
    changed judge is a new, green one) and create or update the rules. Rules are planned only when no evaluator is
    named; one whose forecast cost a day is over `settings.budget.usd` is refused unless `force` with a `reason`."""
    from scoregate.app.judges_forecast import over_budget, refuse_rules_over_budget, rule_forecast
    from scoregate.catalog.judge_rules import read_rules
    from scoregate.integrations.langfuse.client import require_settings
    from scoregate.integrations.langfuse.evaluators_api import EvaluatorsApi
    from scoregate.integrations.langfuse.evaluators_rules import apply_rule, plan_rules
    from scoregate.integrations.langfuse.evaluators_sync import apply_judges, plan_judges
    from scoregate.tracks.project import load_project

    project = load_project(root)
    rules = {} if names else read_rules(root)
    api = EvaluatorsApi(require_settings())
    try:
        report = plan_judges(project, names, api)
        if names:
            report.rules_skipped = "rules/ is planned only when no evaluator file is named"
        live = {p.file: p.evaluator_id for p in report.plans if p.action != "skip"}
        not_live = {p.file: p.notes[0] for p in report.plans if p.action == "skip"}
        report.rules = plan_rules(rules, live, not_live, api, prune=not names)
        costs = {plan.name: rule_forecast(project, plan) for plan in report.rules}
        for plan in report.rules:
            plan.cost = costs[plan.name]
        problems = [p for p in (over_budget(project, plan, costs[plan.name]) for plan in report.rules) if p]
        if dry_run:
            report.over_budget = problems
        else:
            refuse_rules_over_budget(problems, force=force, reason=reason)
            apply_judges(report, api)
            created = {p.file: p.evaluator_id for p in report.plans if p.evaluator_id is not None}
            for plan in report.rules:
                apply_rule(plan, api, created)
            if problems:
                report.forced = reason
                append_judge_record(
                    root, {"action": "rule over budget", "problems": problems, "reason": reason, "host": api.host}
                )
        report.applied, report.requests = not dry_run, api.requests
    finally:
        api.close()
    _register_in_mlflow(project, report, dry_run=dry_run)
    return report


def _register_in_mlflow(project: Project, report: JudgeSyncReport, *, dry_run: bool) -> None:
    """Register the live judges in MLflow's judge registry too; a failure is one line in the report."""
    from scoregate.app.judges_mlflow import register_judges
    from scoregate.scoring.kinds.llm_judge import as_llm_judge
    from scoregate.support.redaction import redact

    settings, judges = project.config.settings, []
    for plan in report.plans:
        spec = as_llm_judge(project.evaluators[plan.file])
        if plan.body is None or spec is None:
            continue
        judges.append((plan.body, spec, project.config.models[spec.model or settings.judge_model or settings.model]))
    if not judges:
        return
    try:
        report.mlflow = register_judges(project.root, judges, dry_run=dry_run)
    except Exception as exc:  # MLflow's own errors are many; Langfuse's part is done and kept
        report.mlflow_problem = redact(f"{type(exc).__name__}: {exc}".splitlines()[0])[:300]
