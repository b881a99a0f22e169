"""`scoregate langfuse setup`: one Langfuse score config per score key the evaluator files declare.

Numeric keys carry their range, categorical keys their categories, boolean keys nothing more; the
`human_*` and `online_thumb` feedback keys are included, and each composite (e.g. `WeightedQuality`),
numeric with the weighted sum of its parts' ranges. The server accepts a second config with an
existing name (recorded on v4.16), so configs are looked up by name here and created only when missing;
a changed description is patched, an archived config unarchived. A config whose type, range or
categories differ from the file is reported and left alone: Langfuse cannot change them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from scoregate.catalog.config_models import CompositeSpec
from scoregate.catalog.models import ScoreKey
from scoregate.catalog.project import Project
from scoregate.integrations.langfuse.canonical import canonical
from scoregate.integrations.langfuse.public_api import PublicApi
from scoregate.integrations.langfuse.scores_file import SCORE_KEYS

FEATURE = "score configs"
PATH = "/api/public/score-configs"
NAME_RULE = re.compile(r"^[A-Za-z0-9_ .()\-]{1,35}$")
"""What the server allows in a config name (35 characters at most)."""
ConfigAction = Literal["create", "update", "unchanged", "conflict"]
_TYPES = {"numeric": "NUMERIC", "boolean": "BOOLEAN", "categorical": "CATEGORICAL", "text": "TEXT"}


@dataclass(frozen=True)
class WantedConfig:
    """A score config as the evaluator files define it."""

    name: str
    data_type: str
    description: str
    min_value: float | None = None
    max_value: float | None = None
    categories: tuple[str, ...] | None = None

    def body(self) -> dict[str, Any]:
        """The create request body (empty fields left out; boolean categories are the server's own)."""
        body: dict[str, Any] = {"name": self.name, "dataType": self.data_type, "description": self.description}
        if self.data_type == "NUMERIC":
            body.update(
                {k: v for k, v in (("minValue", self.min_value), ("maxValue", self.max_value)) if v is not None}
            )
        if self.data_type == "CATEGORICAL" and self.categories:
            body["categories"] = [{"label": label, "value": i} for i, label in enumerate(self.categories)]
        return body

    def differs_from(self, server: dict[str, Any]) -> str | None:
        """Say what cannot be changed on the server's config (type, range, categories), or None."""
        if server.get("dataType") != self.data_type:
            return f"is {server.get('dataType')} in Langfuse and {self.data_type} here"
        if self.data_type == "NUMERIC":
            there = (server.get("minValue"), server.get("maxValue"))
            if canonical(there) != canonical((self.min_value, self.max_value)):
                return f"has range {there[0]}..{there[1]} in Langfuse and {self.min_value}..{self.max_value} here"
        if self.data_type == "CATEGORICAL":
            labels = tuple(c.get("label") for c in server.get("categories") or [])
            if labels != tuple(self.categories or ()):
                mine = ", ".join(self.categories or ())
                return f"has categories {', '.join(map(str, labels))} in Langfuse and {mine} here"
        return None


def _from_key(key: ScoreKey, source: str, description: str) -> WantedConfig | None:
    data_type = _TYPES[key.data_type]
    text = f"{source}: {key.description or description}".strip().rstrip(":")
    if data_type == "NUMERIC" and key.range is not None:
        return WantedConfig(key.key, data_type, text, float(key.range[0]), float(key.range[1]))
    if data_type == "CATEGORICAL":
        return WantedConfig(key.key, data_type, text, categories=tuple(key.categories)) if key.categories else None
    return WantedConfig(key.key, data_type, text)


def _from_composite(name: str, spec: CompositeSpec, parts: dict[str, WantedConfig]) -> WantedConfig:
    """A composite's config: numeric, ranging over the weighted sum of its parts' ranges when each has one."""
    text = f"composite: {spec.description}".strip().rstrip(":")
    low = high = 0.0
    for key, weight in spec.weights.items():
        part = parts.get(key)
        bounds = (0.0, 1.0) if part is not None and part.data_type == "BOOLEAN" else None
        if part is not None and part.min_value is not None and part.max_value is not None:
            bounds = (part.min_value, part.max_value)
        if bounds is None:
            return WantedConfig(name, "NUMERIC", text)
        low += min(weight * bounds[0], weight * bounds[1])
        high += max(weight * bounds[0], weight * bounds[1])
    return WantedConfig(name, "NUMERIC", text, round(low, 6), round(high, 6))


def feedback_configs(keys: dict[str, Any]) -> list[WantedConfig]:
    """The configs of the feedback keys (`scores import`): `human_*`, `online_thumb`, `feedback_comment`."""
    return [WantedConfig(k, r.data_type, f"feedback: {r.description}", r.low, r.high) for k, r in keys.items()]


def wanted_configs(project: Project) -> tuple[list[WantedConfig], list[str]]:
    """Return the configs the evaluator files (and the feedback keys) declare, and the keys that cannot be one."""
    wanted: dict[str, WantedConfig] = {}
    skipped: list[str] = []
    for name, spec in sorted(project.evaluators.items()):
        described = spec.described_scores()
        if described is None:  # the kind describes its keys through its evaluator: (key, type) each
            keys = project.kinds.build(spec, default_judge_model=None).score_keys()
            described = [ScoreKey(key=k, data_type=t) for k, t in keys]
        found = [_from_key(k, name, spec.description) for k in described]
        for config in found:
            if config is not None:
                wanted.setdefault(config.name, config)
    for name, composite in sorted(project.config.composites.items()):
        wanted.setdefault(name, _from_composite(name, composite, wanted))
    for config in feedback_configs(SCORE_KEYS):
        wanted.setdefault(config.name, config)
    for name in list(wanted):
        if not NAME_RULE.match(name):
            skipped.append(f"{name} (a Langfuse config name has at most 35 letters, digits, _ . ( ) - or spaces)")
            del wanted[name]
    return list(wanted.values()), skipped


@dataclass
class ConfigPlan:
    """What setup does for one config."""

    wanted: WantedConfig
    action: ConfigAction
    server: dict[str, Any] | None = None
    problem: str | None = None
    patch: dict[str, Any] = field(default_factory=dict)


@dataclass
class ScoreConfigReport:
    """What `langfuse setup` planned and, unless dry-run, applied; `ids` maps score key → config id."""

    host: str
    plans: list[ConfigPlan]
    applied: bool
    skipped: list[str] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)
    requests: int = 0

    def count(self, action: ConfigAction) -> int:
        """Return how many configs get `action`."""
        return sum(1 for p in self.plans if p.action == action)


def server_configs(api: PublicApi) -> dict[str, dict[str, Any]]:
    """Return the server's configs by name: the newest active one, else an archived one."""
    by_name: dict[str, dict[str, Any]] = {}
    for row in api.pages(FEATURE, "listing score configs", PATH):
        current = by_name.get(row["name"])
        if current is None or (current.get("isArchived") and not row.get("isArchived")):
            by_name[row["name"]] = row
    return by_name


def plan_configs(wanted: list[WantedConfig], there: dict[str, dict[str, Any]]) -> list[ConfigPlan]:
    """Compare the wanted configs with the server's; reads nothing itself."""
    plans = []
    for config in wanted:
        server = there.get(config.name)
        if server is None:
            plans.append(ConfigPlan(config, "create"))
            continue
        problem = config.differs_from(server)
        if problem:
            plans.append(ConfigPlan(config, "conflict", server, problem))
            continue
        patch: dict[str, Any] = {}
        if (server.get("description") or "") != config.description:
            patch["description"] = config.description
        if server.get("isArchived"):
            patch["isArchived"] = False
        plans.append(ConfigPlan(config, "update" if patch else "unchanged", server, patch=patch))
    return plans


def setup_score_configs(project: Project, *, dry_run: bool = False, api: PublicApi | None = None) -> ScoreConfigReport:
    """Create or update the score configs the evaluator files declare; idempotent; never changes a type."""
    own = api is None
    api = api or PublicApi()
    try:
        wanted, skipped = wanted_configs(project)
        plans = plan_configs(wanted, server_configs(api))
        report = ScoreConfigReport(api.host, plans, applied=not dry_run, skipped=skipped)
        for plan in plans:
            if plan.server is not None and plan.action != "conflict":
                report.ids[plan.wanted.name] = str(plan.server["id"])
            if dry_run:
                continue
            if plan.action == "create":
                created = api.call(FEATURE, f"creating score config {plan.wanted.name!r}", "POST", PATH,
                                   json=plan.wanted.body())  # fmt: skip
                report.ids[plan.wanted.name] = str(created["id"])
            elif plan.action == "update":
                assert plan.server is not None
                api.call(FEATURE, f"updating score config {plan.wanted.name!r}", "PATCH",
                         f"{PATH}/{plan.server['id']}", json=plan.patch)  # fmt: skip
        report.requests = api.requests
        return report
    finally:
        if own:
            api.close()


def ensure_configs(api: PublicApi, wanted: list[WantedConfig]) -> dict[str, dict[str, Any]]:
    """Return the server's active configs by name, after creating those of `wanted` it lacks (never a conflict)."""
    there = server_configs(api)
    for plan in plan_configs(wanted, there):
        if plan.action == "create":
            there[plan.wanted.name] = api.call(FEATURE, f"creating score config {plan.wanted.name!r}", "POST", PATH,
                                               json=plan.wanted.body())  # fmt: skip
    return {name: row for name, row in there.items() if not row.get("isArchived")}


def fits(config: dict[str, Any], value: Any, data_type: str) -> bool:
    """True when a score (value, data type) is valid for this config, so it can carry the config id."""
    if config.get("isArchived") or config.get("dataType") != data_type:
        return False
    if data_type == "NUMERIC":
        low, high = config.get("minValue"), config.get("maxValue")
        return isinstance(value, int | float) and (low is None or value >= low) and (high is None or value <= high)
    if data_type == "CATEGORICAL":
        return value in {c.get("label") for c in config.get("categories") or []}
    return data_type in ("BOOLEAN", "TEXT")
