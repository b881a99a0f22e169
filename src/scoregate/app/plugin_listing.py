"""The plug-ins other installed packages add to scoregate: their commands, and one line per package for `--help`."""

from __future__ import annotations

from scoregate.support.registry import Plugin, Registry, declared

GROUPS: dict[str, str] = {
    "scoregate.commands": "command",
    "scoregate.kinds": "evaluator kind",
    "scoregate.sinks": "sink",
    "scoregate.providers": "provider",
    "scoregate.tracks": "track",
}
"""Every entry-point group scoregate reads → what a plug-in of it adds (docs/extending/plugins.md)."""


def _adopt_command(loaded: object, plugin: Plugin) -> tuple[str, str, str]:
    """(module, attribute, one-line help) of a plug-in command: a function with a docstring, or a Typer app with
    a help."""
    help = getattr(getattr(loaded, "info", None), "help", None)
    if not isinstance(help, str):
        help = getattr(loaded, "__doc__", None) if callable(loaded) else None
    line = (help or "").strip().splitlines()[0] if (help or "").strip() else ""
    if not line:
        raise ValueError("has no help: give the function a docstring, or the Typer app a help=")
    module, _, attribute = plugin.value.partition(":")
    if not attribute:
        raise ValueError("names a module, not a function or a Typer app: write `module:attribute`")
    return (module.strip(), attribute.strip(), line)


COMMANDS: Registry[tuple[str, str, str]] = Registry("scoregate.commands", "command", dict, _adopt_command)
"""The plug-in commands (the built-in ones are listed by the CLI itself)."""


def plugin_commands(taken: list[str]) -> dict[str, tuple[str, str, str]]:
    """Command name → (module, attribute, help) of every plug-in command; a PluginError when one is broken or takes
    a name in `taken` (the built-in commands)."""
    commands = COMMANDS.plugins()
    for name, (plugin, _) in commands.items():
        if name in taken:
            raise COMMANDS.collision(plugin)
    return {name: value for name, (_, value) in commands.items()}


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
