"""`scoregate judges plan` / `apply`: each LLM-judge file as a Langfuse evaluator, never edited in place.

The plan reads every evaluator of the project and finds each file's by the marker in its description
(`evaluators_body`): the same definition → unchanged (a changed description alone is patched, which makes no new
version); a changed definition → a NEW evaluator beside the live one (green; rules keep pointing at blue, since a
rule always runs the latest version of what it points at); no evaluator yet → created. Identity lives on the
server, so a second apply from any clone writes nothing, and an apply killed after its create was sent finds that
evaluator on the next run instead of making a second one. Files of other kinds stay with `scoregate run`: the plan
says why for each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scoregate.catalog.evaluators import EvaluatorSpec
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.evaluators_api import EvaluatorsApi
from scoregate.integrations.langfuse.evaluators_body import JudgeBody, judge_body, read_marker
from scoregate.integrations.langfuse.evaluators_code import counters_body
from scoregate.integrations.langfuse.evaluators_rules import RulePlan
from scoregate.scoring.kinds.counters import CountersSpec
from scoregate.scoring.kinds.llm_judge import as_llm_judge

JudgeAction = Literal["create", "green", "describe", "unchanged", "skip"]


@dataclass
class JudgePlan:
    """What apply does for one evaluator file, and (after it) which evaluator holds the file's definition."""

    file: str
    action: JudgeAction
    score: str | None = None
    """The live score name: the file's score key (the evaluator's name)."""
    definition_hash: str | None = None
    evaluator_id: str | None = None
    """The evaluator holding this definition (known before apply unless it is to be created)."""
    version: int | None = None
    blue: list[str] = field(default_factory=list)
    """The file's evaluators with an older definition (`green`): rules keep pointing at them until promoted."""
    notes: list[str] = field(default_factory=list)
    body: JudgeBody | None = field(default=None, repr=False)

    @property
    def writes(self) -> int:
        """Requests that change the server (0 for `unchanged` and `skip`)."""
        return 1 if self.action in ("create", "green", "describe") else 0


@dataclass
class JudgeSyncReport:
    """What `judges plan` found and `judges apply` did."""

    host: str
    server_version: str
    plans: list[JudgePlan]
    applied: bool
    requests: int = 0
    rules: list[RulePlan] = field(default_factory=list)
    rules_skipped: str | None = None
    """Why the rule files were not planned (some evaluator files were named), or None."""
    over_budget: list[str] = field(default_factory=list)
    """Why `apply` would refuse rules over the budget (a plan shows it; apply raises it)."""
    forced: str | None = None
    """The reason given with `--force` for enabling rules over the budget."""
    mlflow: list[Any] = field(default_factory=list)
    """The same judges in MLflow's judge registry (`app.judges_mlflow.MlflowJudge`, one per live judge)."""
    mlflow_problem: str | None = None
    """Why the MLflow registration failed, in one line (Langfuse's part is kept)."""

    def count(self, action: JudgeAction) -> int:
        """The number of files with `action`."""
        return sum(1 for plan in self.plans if plan.action == action)

    @property
    def writes(self) -> int:
        """Requests that change the server, planned or made."""
        return sum(plan.writes for plan in self.plans) + sum(rule.writes for rule in self.rules)


def select_evaluators(project: Project, names: Sequence[str]) -> list[EvaluatorSpec]:
    """The named evaluator files (all when none is named); raise naming the unknown ones."""
    unknown = [n for n in names if n not in project.evaluators]
    if unknown:
        known = ", ".join(sorted(project.evaluators)) or "none"
        raise ScoregateError(
            f"no evaluator {', '.join(map(repr, unknown))} in {project.root / 'evaluators'} (found: {known})"
        )
    return [project.evaluators[n] for n in (names or sorted(project.evaluators))]


def wanted_body(project: Project, spec: EvaluatorSpec) -> JudgeBody | str:
    """The body one file sends, or why it stays local; a file `scoregate validate` refuses is refused here too."""
    from scoregate.tracks.registry import build_evaluator

    settings = project.config.settings
    build_evaluator(spec, default_judge_model=settings.judge_model or settings.model)  # its checks, no model call
    judge = as_llm_judge(spec)
    if judge is None:
        if isinstance(spec, CountersSpec):
            return counters_body(spec)
        return f"kind {spec.kind}: not a judge of one output by a model; scored by `scoregate run` only"
    if not any(path.partition(".")[0] == "output" for path in judge.variables.values()):
        return (
            "reads no `output`: it judges something other than one trace's output (e.g. a pairwise judge); "
            "scored by `scoregate run` only"
        )
    model_name = judge.model or settings.judge_model or settings.model
    model = project.config.models.get(model_name)
    if model is None:
        raise ScoregateError(
            f"judge model {model_name!r} is not defined in scoregate.yaml `models:`",
            where=project.source("evaluator", spec.name),
        )
    return judge_body(spec.name, judge, model)


def _clashes(bodies: list[JudgeBody]) -> None:
    seen: dict[str, str] = {}
    for body in bodies:
        name = body.body["name"]
        if name in seen:
            raise ScoregateError(
                f"evaluators {seen[name]} and {body.file} both score {name!r}: a live score name must be one judge's",
                hint="give one of them another score key",
            )
        seen[name] = body.file


def plan_judge(body: JudgeBody, server: list[dict[str, Any]]) -> JudgePlan:
    """Compare one judge file with the project's evaluators; reads only."""
    marks = {e["id"]: read_marker(e.get("description")) or ("", "") for e in server}
    ours = [e for e in server if marks[e["id"]][0] == body.file]
    same = sorted((e for e in ours if marks[e["id"]][1] == body.definition_hash), key=_age)
    score = ", ".join(body.scores) or body.body["name"]
    plan = JudgePlan(body.file, "create", score, body.definition_hash, notes=list(body.local_only), body=body)
    others = [e for e in server if e["name"] == body.body["name"] and e not in ours]
    if others:
        plan.notes.append(
            f"{len(others)} evaluator(s) named {body.body['name']!r} not made by scoregate also write this score"
        )
    if same:
        current = same[0]
        plan.evaluator_id, plan.version = current["id"], current["version"]
        plan.action = "unchanged" if current.get("description") == body.body["description"] else "describe"
        if len(same) > 1:
            plan.notes.append(f"{len(same)} evaluators hold this definition; the oldest, {current['id']}, is used")
    elif ours:
        plan.action = "green"
        plan.blue = [e["id"] for e in sorted(ours, key=_age)]
    return plan


def _age(evaluator: dict[str, Any]) -> tuple[str, str]:
    return str(evaluator.get("createdAt")), str(evaluator["id"])


def apply_judge(plan: JudgePlan, api: EvaluatorsApi) -> None:
    """Write one plan: create the evaluator (blue or green), or patch its description (no new version)."""
    assert plan.body is not None
    if plan.action in ("create", "green"):
        created = api.create_evaluator(plan.body.body)
        plan.evaluator_id, plan.version = created["id"], created["version"]
    elif plan.action == "describe":
        assert plan.evaluator_id is not None
        doing = f"updating the description of evaluator {plan.evaluator_id} ({plan.file})"
        api.patch_evaluator(plan.evaluator_id, {"description": plan.body.body["description"]}, doing)


def plan_judges(project: Project, names: Sequence[str], api: EvaluatorsApi) -> JudgeSyncReport:
    """Probe the server (one-line refusal without the v2 API), then plan every selected evaluator file; reads only."""
    specs = select_evaluators(project, names)
    wanted = {spec.name: wanted_body(project, spec) for spec in specs}
    _clashes([body for body in wanted.values() if isinstance(body, JudgeBody)])
    api.probe()
    server = api.evaluators()
    plans = [
        plan_judge(body, server) if isinstance(body, JudgeBody) else JudgePlan(name, "skip", notes=[body])
        for name, body in wanted.items()
    ]
    return JudgeSyncReport(api.host, api.server_version(), plans, applied=False)


def apply_judges(report: JudgeSyncReport, api: EvaluatorsApi) -> None:
    """Write every judge plan that changes the server."""
    for plan in report.plans:
        if plan.writes:
            apply_judge(plan, api)


def sync_judges(
    project: Project, names: Sequence[str] = (), *, dry_run: bool = False, api: EvaluatorsApi | None = None
) -> JudgeSyncReport:
    """Plan the selected evaluator files against Langfuse's evaluators, then (unless dry-run) apply; no rules."""
    api = api or EvaluatorsApi()
    try:
        report = plan_judges(project, names, api)
        if not dry_run:
            apply_judges(report, api)
        report.applied, report.requests = not dry_run, api.requests
        return report
    finally:
        api.close()
