"""The plug-ins other installed packages add to scoregate: one line per package for `--help`, and all of them loaded
and checked before a command starts (the plug-in commands are loaded by the CLI's registry, `cli/commands.py`)."""

from __future__ import annotations

from scoregate.support.registry import declared

GROUPS: dict[str, str] = {
    "scoregate.commands": "command",
    "scoregate.kinds": "evaluator kind",
    "scoregate.sinks": "sink",
    "scoregate.providers": "provider",
    "scoregate.tracks": "track",
}
"""Every entry-point group scoregate reads → what a plug-in of it adds (docs/extending/plugins.md)."""


def installed_plugins() -> list[str]:
    """One line per package that adds plug-ins: `package: sink notes, evaluator kind shouts` (none loaded)."""
    by_package: dict[str, list[str]] = {}
    for group, what in GROUPS.items():
        for plugin in declared(group):
            by_package.setdefault(plugin.distribution, []).append(f"{what} {plugin.name}")
    return [f"{package}: {', '.join(added)}" for package, added in sorted(by_package.items())]


def check_plugins() -> None:
    """Load every installed plug-in once; raise PluginError naming the package of the first broken or duplicate
    one. Without a plug-in package this only looks at the installed packages' entry-point files."""
    if not installed_plugins():
        return
    from scoregate.providers.registry import REGISTRY as PROVIDERS
    from scoregate.sinks.registry import REGISTRY as SINKS
    from scoregate.tracks.registry import KINDS, TRACKS

    for registry in (TRACKS, KINDS, SINKS, PROVIDERS):
        registry.plugins()
