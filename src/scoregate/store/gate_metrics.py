"""The metrics a set of runs' recorded gates judge: what a comparison shows first."""

from __future__ import annotations

from collections.abc import Iterable

from scoregate.store.record import Manifest


def gated_metrics(manifests: Iterable[Manifest]) -> list[str]:
    """Return the metrics the runs' recorded gates judge, in gate order (the default primary metrics)."""
    seen: dict[str, None] = {}
    for manifest in manifests:
        gates = manifest.receipts.gates
        for gate in gates if isinstance(gates, list) else []:
            if gate.get("metric"):
                seen[str(gate["metric"])] = None
    return list(seen)
