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
    from scoregate.app import ProjectCache

    count, size = ProjectCache(project_root(project)).stats()
    console.print(f"{count} cached responses, {size / 1e6:.1f} MB")


@app.command("clear")
def clear(project: ProjectOption = None) -> None:
    """Delete every cached response."""
    from scoregate.app import ProjectCache

    console.print(f"removed {ProjectCache(project_root(project)).clear()} cached responses")
