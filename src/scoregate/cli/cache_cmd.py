"""`scoregate cache stats|clear`: the on-disk response cache."""

from __future__ import annotations

import typer

from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

app = typer.Typer(help="The response cache (.scoregate/cache.sqlite).", no_args_is_help=True)
console = lazy_console()


@app.command("stats")
def stats(project: ProjectOption = None) -> None:
    """Show how many responses are cached and the file size."""
    from scoregate.app import cache_stats

    count, size = cache_stats(project_root(project))
    console.print(f"{count} cached responses, {size / 1e6:.1f} MB")


@app.command("clear")
def clear(project: ProjectOption = None) -> None:
    """Delete every cached response."""
    from scoregate.app import clear_cache

    console.print(f"removed {clear_cache(project_root(project))} cached responses")
