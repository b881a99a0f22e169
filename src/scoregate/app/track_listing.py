"""The commands the tracks add to `scoregate`, read from each track's `commands.py` without loading the track."""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec

from scoregate.support.registry import declared
from scoregate.tracks import listing


def _track_packages() -> list[str]:
    """The package of every track: `tracks/listing.py`'s, then each plug-in track's (the package of its entry
    point's module), none loaded."""
    modules = [plugin.value.partition(":")[0].strip() for plugin in declared("scoregate.tracks")]
    plugins = [module.rpartition(".")[0] or module for module in modules]
    return [*listing.TRACK_PACKAGES, *(package for package in plugins if package)]


def track_commands() -> dict[str, tuple[str, str, str]]:
    """Command name → (module, attribute, one-line help) for every track's commands, in the tracks' order."""
    found: dict[str, tuple[str, str, str]] = {}
    for package in _track_packages():
        if find_spec(f"{package}.commands") is None:
            continue  # a track without commands
        commands: dict[str, tuple[str, str]] = import_module(f"{package}.commands").COMMANDS
        for name, (attribute, help) in commands.items():
            found[name] = (f"{package}.cli", attribute, help)
    return found
