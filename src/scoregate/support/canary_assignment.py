"""Sticky canary assignment for apps: a stable hash of a user or session id says `canary` or `production`.

An app serving a prompt under a rollout asks, per request, which label to fetch:

    from scoregate.support.canary_assignment import canary_label

    label = canary_label(session_id, share=0.10, salt="call-summary")   # "canary" or "production"
    prompt = langfuse.get_prompt("call-summary", label=label)

It imports only the standard library (no scoregate layer, no numpy), so an app pays nothing for it. The same id
always gets the same label at the same share, on every machine and Python version (SHA-256, not `hash()`); a
larger share keeps every id that was already on the canary there (raising 10% to 20% adds ids, moves none
back); `salt` (the prompt's name, say) makes two rollouts split their users independently. Tag each trace with
the id and the label, so `scoregate rollout watch` can check the observed split against the share.
"""

from __future__ import annotations

import hashlib
import math
from typing import Literal

__all__ = ["Label", "bucket", "canary_label"]

Label = Literal["canary", "production"]


def bucket(unit_id: str, *, salt: str = "") -> float:
    """Return the id's fixed place in [0, 1): the first 64 bits of SHA-256(salt, id) as a fraction."""
    if not isinstance(unit_id, str) or not unit_id:
        raise ValueError(f"a user or session id must be a non-empty string, got {unit_id!r}")
    digest = hashlib.sha256(f"{salt}\x00{unit_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def canary_label(unit_id: str, share: float, *, salt: str = "") -> Label:
    """Return "canary" for a `share` (0 to 1) of ids, the same ones every time, else "production"."""
    if isinstance(share, bool) or not isinstance(share, int | float) or not math.isfinite(share) or not 0 <= share <= 1:
        raise ValueError(f"share must be a number from 0 to 1 (0.10 for 10%), got {share!r}")
    return "canary" if bucket(unit_id, salt=salt) < share else "production"
