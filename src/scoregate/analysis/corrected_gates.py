"""A gate judged on a judge score's bias-corrected estimate: INCOMPLETE with the reason where there is none, never
passed on the raw mean instead."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scoregate.analysis.gates import holds
from scoregate.catalog.config_models import GateSpec
from scoregate.store.record import GateResult

FIELD = {"mean": "value", "ci_low": "ci_low", "ci_high": "ci_high"}
"""The corrected block's field each gate stat reads."""


def _raw_words(raw: GateResult) -> str:
    return f"raw {raw.stat} {raw.observed:.4g}" if raw.observed is not None else f"raw: {raw.detail}"


def corrected_gate(raw: GateResult, gate: GateSpec, corrected: Mapping[str, Any] | None) -> GateResult:
    """Return the gate judged on `corrected` (the score's corrected block) instead of the raw mean.

    A raw verdict that is incomplete (the metric missing, coverage under the floor) stays incomplete; a corrected
    block that is missing or null makes the gate incomplete with its reason.
    """
    marked = {"estimate": "corrected"}
    if raw.status == "incomplete":
        return raw.model_copy(update={**marked, "detail": f"{raw.detail} (gate on the corrected estimate)"})
    field = FIELD.get(gate.stat)
    value = None if corrected is None or field is None else corrected.get(field)
    if value is None:
        reason = "no corrected estimate" if corrected is None else corrected.get("reason") or "not computed"
        detail = f"corrected {gate.stat} of {gate.metric} cannot be computed: {reason}; {_raw_words(raw)} not gated"
        return raw.model_copy(update={**marked, "status": "incomplete", "observed": None, "detail": detail})
    assert corrected is not None
    ok = holds(gate.op, float(value), gate.threshold)
    method = corrected.get("method_name") or corrected.get("method")
    labels = corrected.get("n_labels")
    detail = f"corrected {gate.stat} = {value:.4g} ({method}, {labels} labels; {_raw_words(raw)})"
    return raw.model_copy(
        update={**marked, "status": "pass" if ok else "fail", "observed": float(value), "detail": detail}
    )
