"""`scoregate datasets sync`: make Langfuse's datasets match datasets/ — plan the difference, then apply it.

Item ids are project-global in Langfuse, so each item's Langfuse id is derived from (dataset name, local id).
Items are compared by a hash of what Langfuse stores (input, expected output, metadata); an unchanged item is
not written, so a second sync with no local change writes nothing. Items removed locally are archived with
`--prune`, never deleted (a delete also removes their experiment runs); an archived item that is back in the
local file is restored (made active again, with its content).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonschema

from scoregate.catalog.datasets import DatasetRef, iter_items, scan
from scoregate.catalog.models import DatasetItem
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError, ValidationFailed
from scoregate.integrations.langfuse.canonical import canonical, canonical_hash, parsed
from scoregate.integrations.langfuse.client import require_settings
from scoregate.integrations.langfuse.remote import Remote, path_part
from scoregate.integrations.langfuse.throttle import DEFAULT_RPM, RPM_ENV

ITEM_ID_NAMESPACE = uuid.UUID("6f1c3c1e-5b7a-4d2e-9a59-3c0de5ca1e01")
LOCAL_ID_KEY = "scoregate_item_id"
"""Metadata key holding the item's local id, so a Langfuse item leads back to its line in datasets/."""
PAGE_SIZE = 50

ItemAction = Literal["create", "restore", "update", "unchanged", "archive", "extra"]
WRITES: tuple[ItemAction, ...] = ("create", "restore", "update", "archive")
DatasetAction = Literal["create", "update", "unchanged"]


def langfuse_item_id(dataset: str, local_id: str) -> str:
    """Return the Langfuse id of a local item: a UUID derived from dataset name and local id (stable, global)."""
    return str(uuid.uuid5(ITEM_ID_NAMESPACE, f"{dataset}:{local_id}"))


def _as_stored(value: Any) -> Any:
    """Return `value` as Langfuse stores and returns it: JSON strings parsed, numbers in JavaScript's form."""
    return canonical(parsed(value))


def content_hash(input: Any, expected_output: Any, metadata: Any) -> str:
    """Return the hash of an item's stored content (input, expected output, metadata) in canonical form."""
    return canonical_hash([parsed(input), parsed(expected_output), parsed(metadata) or None])


@dataclass(frozen=True)
class ItemPayload:
    """The content of one item as it is sent to Langfuse."""

    input: Any
    expected_output: Any
    metadata: dict[str, Any]

    @classmethod
    def of(cls, item: DatasetItem) -> ItemPayload:
        """Return the payload of a local item: its metadata carries its local id."""
        return cls(item.input, item.expected_output, {**item.metadata, LOCAL_ID_KEY: item.id})

    @property
    def hash(self) -> str:
        """The content hash compared with Langfuse's copy."""
        return content_hash(self.input, self.expected_output, self.metadata)


@dataclass(frozen=True)
class ItemChange:
    """What the sync does to one item; `local_id` is None for an item only Langfuse has."""

    langfuse_id: str
    local_id: str | None
    action: ItemAction
    payload: ItemPayload | None = field(default=None, repr=False)


@dataclass
class DatasetPlan:
    """The difference between one local dataset and Langfuse, and what applying it writes."""

    name: str
    action: DatasetAction
    settings: dict[str, Any]
    items: list[ItemChange] = field(default_factory=list)

    def count(self, action: ItemAction) -> int:
        """Return how many items get `action`."""
        return sum(1 for change in self.items if change.action == action)

    @property
    def writes(self) -> int:
        """Requests applying this plan sends."""
        return (self.action != "unchanged") + sum(1 for c in self.items if c.action in WRITES)


@dataclass
class DatasetSyncReport:
    """What `datasets sync` planned and, unless dry-run, applied."""

    host: str
    project: str
    plans: list[DatasetPlan]
    applied: bool
    prune: bool
    requests: int = 0
    throttled_s: float = 0.0
    rpm: float = DEFAULT_RPM
    """The throttle's requests a minute (0: no limit), from SCOREGATE_LANGFUSE_RPM."""

    def pace(self) -> str:
        """What paces the requests, naming the setting that changes it: `at most 90 requests a minute (…)`."""
        if self.rpm <= 0:
            return f"no limit ({RPM_ENV}=0)"
        return f"at most {self.rpm:g} requests a minute ({RPM_ENV})"

    def total(self, action: ItemAction) -> int:
        """Return the number of items with `action` across all datasets."""
        return sum(plan.count(action) for plan in self.plans)


def select_datasets(project: Project, names: Sequence[str]) -> list[DatasetRef]:
    """Return the named datasets (all when none is named); raise naming the unknown ones."""
    unknown = [n for n in names if n not in project.datasets]
    if unknown:
        known = ", ".join(sorted(project.datasets)) or "none"
        raise ScoregateError(
            f"no dataset {', '.join(map(repr, unknown))} in {project.root / 'datasets'} (found: {known})"
        )
    return [project.datasets[n] for n in (names or sorted(project.datasets))]


def check_local(ref: DatasetRef) -> None:
    """Validate every line and both JSON Schemas before any request; raise ValidationFailed listing the problems."""
    validators = {
        part: jsonschema.Draft202012Validator(schema)
        for part, schema in (("input", ref.meta.input_schema), ("expected_output", ref.meta.expected_output_schema))
        if schema
    }

    def check(_line: int, item: DatasetItem) -> list[str]:
        found = []
        for part, validator in validators.items():
            for err in validator.iter_errors(getattr(item, part)):
                path = "".join(f".{p}" for p in err.absolute_path)
                found.append(f"{part}{path}: {err.message} (schema in {ref.meta_path})")
        return found

    problems = scan(ref.path, check).problems
    if problems:
        raise ValidationFailed(problems, hint="fix the dataset; nothing was sent to Langfuse")


def _dataset_settings(ref: DatasetRef) -> dict[str, Any]:
    """Return the dataset fields scoregate sets (empty ones left out: Langfuse keeps a value a null would clear)."""
    wanted = {
        "description": ref.meta.description or None,
        "metadata": ref.meta.metadata or None,
        "input_schema": ref.meta.input_schema,
        "expected_output_schema": ref.meta.expected_output_schema,
    }
    return {k: v for k, v in wanted.items() if v is not None}


def _remote_items(remote: Remote, name: str) -> Iterator[Any]:
    """Yield the dataset's active items in Langfuse, page by page."""
    page = 1
    while True:
        listed = remote.call(
            f"listing the items of dataset {name!r}",
            remote.api.dataset_items.list,
            dataset_name=name,
            page=page,
            limit=PAGE_SIZE,
        )
        yield from listed.data
        if not listed.data or page >= (listed.meta.total_pages or 0):
            return
        page += 1


def plan_dataset(ref: DatasetRef, remote: Remote, *, prune: bool) -> DatasetPlan:
    """Compare one local dataset with Langfuse and return the plan; reads only."""
    wanted = _dataset_settings(ref)
    found = remote.find(f"reading dataset {ref.name!r}", remote.api.datasets.get, path_part(ref.name))
    if found is None:
        plan = DatasetPlan(ref.name, "create", wanted)
        existing: dict[str, Any] = {}
    else:
        stored = {k: _as_stored(getattr(found, k)) if k == "metadata" else getattr(found, k) for k in wanted}
        changed = canonical(stored) != canonical(wanted)
        plan = DatasetPlan(ref.name, "update" if changed else "unchanged", wanted)
        existing = {item.id: item for item in _remote_items(remote, ref.name)}
    for _line, item in iter_items(ref.path):
        assert item.id is not None
        langfuse_id = langfuse_item_id(ref.name, item.id)
        payload = ItemPayload.of(item)
        there = existing.pop(langfuse_id, None)
        if there is None:
            action: ItemAction = "restore" if found is not None and _archived(remote, langfuse_id) else "create"
        elif content_hash(there.input, there.expected_output, there.metadata) != payload.hash:
            action = "update"
        else:
            action = "unchanged"
        plan.items.append(ItemChange(langfuse_id, item.id, action, payload if action != "unchanged" else None))
    for langfuse_id, there in existing.items():
        local_id = there.metadata.get(LOCAL_ID_KEY) if isinstance(there.metadata, dict) else None
        kept = ItemPayload(there.input, there.expected_output, there.metadata)
        plan.items.append(ItemChange(langfuse_id, local_id, "archive" if prune else "extra", kept if prune else None))
    return plan


def _archived(remote: Remote, langfuse_id: str) -> bool:
    """True when Langfuse keeps this item archived (the listing shows active items only)."""
    item = remote.find(f"reading item {langfuse_id}", remote.api.dataset_items.get, langfuse_id)
    status = getattr(item, "status", None)
    return str(getattr(status, "value", status)) == "ARCHIVED"


def apply_dataset(plan: DatasetPlan, remote: Remote) -> None:
    """Write one plan to Langfuse: the dataset if new or changed, then each created, updated or archived item."""
    from langfuse.api import DatasetStatus

    if plan.action != "unchanged":
        remote.call(f"saving dataset {plan.name!r}", remote.api.datasets.create, name=plan.name, **plan.settings)
    for change in plan.items:
        if change.action not in WRITES:
            continue
        assert change.payload is not None
        status = DatasetStatus.ARCHIVED if change.action == "archive" else DatasetStatus.ACTIVE
        remote.call(
            f"saving item {change.local_id or change.langfuse_id!r} of dataset {plan.name!r}",
            remote.api.dataset_items.create,
            dataset_name=plan.name,
            id=change.langfuse_id,
            input=change.payload.input,
            expected_output=change.payload.expected_output,
            metadata=change.payload.metadata,
            status=status,
        )


def sync_datasets(
    project: Project,
    names: Sequence[str] = (),
    *,
    dry_run: bool = False,
    prune: bool = False,
    remote: Remote | None = None,
) -> DatasetSyncReport:
    """Plan every selected dataset against Langfuse, then (unless dry-run) apply the plans; return the report.

    Local files are validated before the first request; a failed request stops the sync with a clear error, and
    running it again continues where it stopped (writes are upserts by deterministic id).
    """
    refs = select_datasets(project, names)
    for ref in refs:
        check_local(ref)
    remote = remote or Remote(require_settings())
    info = remote.project()
    plans = [plan_dataset(ref, remote, prune=prune) for ref in refs]
    if not dry_run:
        for plan in plans:
            apply_dataset(plan, remote)
    return DatasetSyncReport(
        host=remote.settings.host,
        project=info.name,
        plans=plans,
        applied=not dry_run,
        prune=prune,
        requests=remote.requests,
        throttled_s=remote.throttle.waited_s,
        rpm=remote.throttle.per_minute,
    )
