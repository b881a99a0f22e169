"""`scoregate cache stats|clear`: the on-disk response cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from scoregate.cli.console import lazy_console
from scoregate.cli.options import ProjectOption, project_root

if TYPE_CHECKING:
    from scoregate.calls.cache import ResponseCache

app = typer.Typer(help="The response cache (.scoregate/cache.sqlite).", no_args_is_help=True)
console = lazy_console()


def _cache(project: ProjectOption) -> ResponseCache:
    from scoregate.calls.cache import ResponseCache

    return ResponseCache(project_root(project) / ".scoregate" / "cache.sqlite")


@app.command("stats")
def stats(project: ProjectOption = None) -> None:
    """Show how many responses are cached and the file size."""
    count, size = _cache(project).stats()
    console.print(f"{count} cached responses, {size / 1e6:.1f} MB")


@app.command("clear")
def clear(project: ProjectOption = None) -> None:
    """Delete every cached response."""
    console.print(f"removed {_cache(project).clear()} cached responses")
