"""The commands the tracks add to `scoregate`, read from each track's `commands.py` without loading the track."""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec

from scoregate.tracks.listing import TRACK_PACKAGES


def track_commands() -> dict[str, tuple[str, str, str]]:
    """Command name → (module, attribute, one-line help) for every track's commands, in the tracks' order."""
    found: dict[str, tuple[str, str, str]] = {}
    for package in TRACK_PACKAGES:
        if find_spec(f"{package}.commands") is None:
            continue  # a track without commands
        commands: dict[str, tuple[str, str]] = import_module(f"{package}.commands").COMMANDS
        for name, (attribute, help) in commands.items():
            found[name] = (f"{package}.cli", attribute, help)
    return found
