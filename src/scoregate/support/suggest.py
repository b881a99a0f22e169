"""The closest known names to a misspelt one (`gpt4o-mini` → `gpt-4o-mini`), as the CLI suggests commands."""

from __future__ import annotations

from collections.abc import Iterable
from difflib import SequenceMatcher, get_close_matches

MAX_LISTED = 12
"""Known names listed in full after a suggestion; a longer list is cut, with a count of the rest."""


def close_names(name: str, known: Iterable[str], *, n: int = 3) -> list[str]:
    """Return up to `n` known names closest to `name`, best first (case is ignored); [] when none is close."""
    by_lower: dict[str, str] = {}
    for choice in known:
        by_lower.setdefault(choice.lower(), choice)
    matches = get_close_matches(name.lower(), list(by_lower), n=n, cutoff=0.6)
    if not matches:  # a prefix or a name inside a longer one (`smoke` for `smoke_v1`) is close too
        matches = [c for c in by_lower if len(name) >= 3 and name.lower() in c][:n]
        matches.sort(key=lambda c: -SequenceMatcher(None, name.lower(), c).ratio())
    return [by_lower[m] for m in matches]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """Return "did you mean `x`?" (or "`x` or `y`") for the names closest to `name`, or "" when none is close."""
    matches = close_names(name, known)
    if not matches:
        return ""
    return f"did you mean {' or '.join(f'`{m}`' for m in matches)}?"


def unknown_name(name: str, known: Iterable[str]) -> str:
    """Return " (defined: a, b, …); did you mean `x`?": the known names (cut after 12), then the closest ones."""
    names = sorted(set(known))
    suggestion = did_you_mean(name, names)
    listed = ", ".join(names[:MAX_LISTED]) or "none"
    if len(names) > MAX_LISTED:
        listed += f" and {len(names) - MAX_LISTED} more"
    return f" (defined: {listed})" + (f"; {suggestion}" if suggestion else "")
