"""Slice fields of a gate (`slices: [field, ...]`): how an item's slice is read, and the check that items have it.

A field is `input.<name>`, `metadata.<name>`, or a bare `<name>`: the item's input field of that name, else
its metadata field. An item without the field is in the slice `(none)`; a value that is not a string,
number or boolean is read as its JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scoregate.catalog.config_models import GateSpec
from scoregate.support.suggest import did_you_mean

NO_VALUE = "(none)"
"""The slice of the items that lack the field."""


def _lookup(field: str, input_: Mapping[str, Any], metadata: Mapping[str, Any]) -> tuple[bool, Any]:
    if field.startswith("input."):
        name = field.removeprefix("input.")
        return name in input_, input_.get(name)
    if field.startswith("metadata."):
        name = field.removeprefix("metadata.")
        return name in metadata, metadata.get(name)
    if field in input_:
        return True, input_[field]
    return field in metadata, metadata.get(field)


def slice_value(field: str, input_: Mapping[str, Any], metadata: Mapping[str, Any]) -> str:
    """Return the item's slice for `field` as text (`(none)` when the item lacks the field)."""
    found, value = _lookup(field, input_ or {}, metadata or {})
    if not found or value is None:
        return NO_VALUE
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def has_field(field: str, input_: Mapping[str, Any], metadata: Mapping[str, Any]) -> bool:
    """True when the item holds `field` (with any value but null)."""
    found, value = _lookup(field, input_ or {}, metadata or {})
    return found and value is not None


class SliceFieldsSeen:
    """Collects, over a dataset's items, which slice fields of the gates some item has."""

    def __init__(self, gates: list[GateSpec], dataset: str) -> None:
        self.gates = [g for g in gates if g.slices and (g.datasets is None or dataset in g.datasets)]
        self.wanted = {f for g in self.gates for f in g.slices or []}
        self.seen: set[str] = set()
        self.item_fields: set[str] = set()

    def add(self, input_: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
        """Note the slice fields one item has."""
        if not self.wanted:
            return
        self.seen |= {f for f in self.wanted - self.seen if has_field(f, input_, metadata)}
        if len(self.item_fields) < 200:
            self.item_fields |= {f"input.{k}" for k in input_} | {f"metadata.{k}" for k in metadata}

    def problems(self, config_path: Path, dataset_path: Path) -> list[str]:
        """One line per gate and slice field that no item of the dataset has."""
        fields = ", ".join(sorted(self.item_fields)) or "none"
        return [
            f"{config_path}: gates.{gate.name}.slices: no item of {dataset_path} has the field {field!r} in its "
            f"input or metadata{self._closest(field)} (fields the items have: {fields}); name one of those, or add "
            "it to the items"
            for gate in self.gates
            for field in gate.slices or []
            if field not in self.seen
        ]

    def _closest(self, field: str) -> str:
        """Return "; did you mean `x`?" for the item fields closest to `field`, written as it was (prefixed or bare)."""
        if field.startswith(("input.", "metadata.")):
            known = self.item_fields
        else:
            known = {f.partition(".")[2] for f in self.item_fields}
        suggestion = did_you_mean(field, known)
        return f"; {suggestion}" if suggestion else ""
