"""Names a user gives that become file names, MLflow keys and Langfuse names: one safe pattern, checked on reading."""

from __future__ import annotations

import re

NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}")
"""A prompt, evaluator or dataset name: one file name, usable as part of an MLflow key and a Langfuse name."""
NAME_RULE = "letters, digits, '_', '-' and '.' only, at most 100, not starting with '.' or '-'"
MAX_ITEM_ID = 256
"""The longest dataset item id (an id names an MLflow trace and a Langfuse item, and is shown in every table)."""


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a prompt, evaluator or dataset (spaces, `/`, `..`, `+@()`, too long), or None."""
    if NAME.fullmatch(name):
        return None
    shown = name if len(name) <= 200 else name[:200] + "…"
    return f"{shown!r} is not a usable name: use {NAME_RULE} (it names files, MLflow params and Langfuse objects)"
