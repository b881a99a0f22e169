"""One registry shape: scoregate's built-ins by name, plus the plug-ins installed packages declare as entry points.

A plug-in is an entry point in a group such as `scoregate.sinks`, declared by another distribution
(`[project.entry-points."scoregate.sinks"]` in its pyproject.toml). A registry reads its group the first time it
is asked, loads each plug-in, and refuses one that fails to import, lacks what its kind of plug-in must have, or
takes a name already taken: a `PluginError` naming the distribution, never a traceback and never a built-in
silently shadowed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Generic, TypeVar

from scoregate.errors import ScoregateError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint, EntryPoints

T = TypeVar("T")
BUILT_IN = "scoregate"
"""The distribution every built-in belongs to, as a collision names it."""


class PluginError(ScoregateError):
    """An installed plug-in that cannot be used: it fails to import, lacks a member, or takes a taken name."""


@dataclass(frozen=True)
class Plugin:
    """One declared entry point: its name, the distribution that declares it and its `module:attribute`."""

    group: str
    name: str
    distribution: str
    value: str

    @property
    def where(self) -> str:
        """The entry point as its distribution's metadata spells it, for an error message."""
        return f"{self.group}: {self.name} = {self.value}"


@cache
def _may_declare(prefix: str) -> bool:
    """Whether any distribution on sys.path has an entry_points.txt naming a group that starts with `prefix`.

    A few directory listings and small reads: `importlib.metadata` (~15-30 ms to import and scan) is loaded only
    when this finds one, so `scoregate --help` without plug-ins stays as fast as before (bench/plugin_startup.py).
    """
    needle = f"[{prefix}"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(entry or ".", name, "entry_points.txt"), encoding="utf-8") as handle:
                    if needle in handle.read():
                        return True
            except (OSError, UnicodeDecodeError):
                continue
    return False


def declared(group: str) -> list[Plugin]:
    """Every entry point of `group` in the installed distributions, none loaded, by name."""
    if not _may_declare(group.split(".")[0] + "."):
        return []
    found = [_plugin(point) for point in _entry_points().select(group=group)]
    return sorted(found, key=lambda plugin: (plugin.name, plugin.distribution))


@cache
def _entry_points() -> EntryPoints:
    """Every entry point of the installed distributions, read once: a scan reads each one's metadata, and `--help`
    asks for several groups."""
    from importlib.metadata import EntryPoints, distributions

    seen: set[str] = set()
    points: list[EntryPoint] = []
    for dist in distributions():  # the first of each name on sys.path, as `entry_points()` reads them
        name = getattr(dist, "_normalized_name", None) or dist.metadata["Name"]
        if name not in seen:
            seen.add(name)
            points.extend(dist.entry_points)
    return EntryPoints(points)


def _plugin(point: EntryPoint) -> Plugin:
    dist = point.dist.name if point.dist is not None else "an unnamed distribution"
    return Plugin(point.group, point.name, dist, point.value)


def load_plugin(plugin: Plugin) -> object:
    """Import a plug-in's module and return its attribute; raise PluginError with the exception's first line."""
    from importlib.metadata import EntryPoint

    try:
        return EntryPoint(plugin.name, plugin.value, plugin.group).load()
    except Exception as exc:
        said = (str(exc).strip().splitlines() or [""])[0]
        raise PluginError(
            f"plug-in {plugin.name!r} of the package {plugin.distribution!r} fails to load "
            f"({plugin.where}): {type(exc).__name__}: {said}".rstrip(": "),
            hint=f"fix or reinstall {plugin.distribution}, or uninstall it: pip uninstall {plugin.distribution}",
        ) from exc


class Registry(Generic[T]):
    """Built-ins by name (read afresh on each use) and the plug-ins of one entry-point group (read once).

    `adopt(loaded, plugin)` turns a loaded entry point into the registry's value (the object itself, or the
    entry point's `module:attribute` for a registry of lazy targets), or raises ValueError saying what it lacks.
    """

    def __init__(
        self,
        group: str,
        what: str,
        built_ins: Callable[[], Mapping[str, T]],
        adopt: Callable[[object, Plugin], T],
    ) -> None:
        self.group, self.what, self.built_ins, self.adopt = group, what, built_ins, adopt
        self._plugins: dict[str, tuple[Plugin, T]] | None = None

    def plugins(self) -> dict[str, tuple[Plugin, T]]:
        """Name → (the entry point, its value) of every plug-in, loaded and checked on first use."""
        if self._plugins is None:
            self._plugins = self._load()
        return self._plugins

    def _load(self) -> dict[str, tuple[Plugin, T]]:
        built_ins = self.built_ins()
        loaded: dict[str, tuple[Plugin, T]] = {}
        for plugin in declared(self.group):
            if plugin.name in built_ins:
                raise self.collision(plugin)
            if plugin.name in loaded:
                first = loaded[plugin.name][0].distribution
                raise PluginError(
                    f"two packages declare the plug-in {self.what} {plugin.name!r}: {first!r} and "
                    f"{plugin.distribution!r} ({self.group})",
                    hint="uninstall one of them, or rename the entry point in one",
                )
            try:
                value = self.adopt(load_plugin(plugin), plugin)
            except ValueError as exc:
                raise PluginError(
                    f"plug-in {self.what} {plugin.name!r} of the package {plugin.distribution!r} "
                    f"({plugin.where}) {exc}",
                    hint=f"fix {plugin.distribution}, or uninstall it: pip uninstall {plugin.distribution}",
                ) from None
            loaded[plugin.name] = (plugin, value)
        return loaded

    def collision(self, plugin: Plugin) -> PluginError:
        """The error for a plug-in that takes the name of a built-in."""
        return PluginError(
            f"plug-in {self.what} {plugin.name!r} of the package {plugin.distribution!r} takes the name "
            f"of {BUILT_IN}'s built-in {self.what} ({plugin.where})",
            hint=f"rename the entry point in {plugin.distribution}, or uninstall it",
        )

    def entries(self) -> dict[str, T]:
        """Name → value of every built-in, then every plug-in (by name)."""
        return {**self.built_ins(), **{name: value for name, (_, value) in self.plugins().items()}}

    def names(self) -> list[str]:
        """Every name: the built-ins in their order, then the plug-ins."""
        return list(self.entries())

    def __contains__(self, name: object) -> bool:
        return name in self.entries()

    def __getitem__(self, name: str) -> T:
        return self.entries()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries())

    def distribution(self, name: str) -> str:
        """The package that provides `name`: the plug-in's distribution, or scoregate for a built-in."""
        found = self.plugins().get(name)
        return found[0].distribution if found else BUILT_IN

    def forget(self) -> None:
        """Read the plug-ins again on next use (after an install in the same process)."""
        self._plugins = None
        _may_declare.cache_clear()
        _entry_points.cache_clear()
