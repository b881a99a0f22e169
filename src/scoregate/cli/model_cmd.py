"""`scoregate model serve|stop|status`: the embedded local model server."""

from __future__ import annotations

import typer

from scoregate.cli.console import lazy_console
from scoregate.cli.options import ProjectOption, project_root

app = typer.Typer(help="The embedded local model (llama.cpp serving SmolLM2-135M-Instruct).", no_args_is_help=True)
console = lazy_console()


@app.command("serve")
def serve(project: ProjectOption = None) -> None:
    """Start the local model server in the background and wait until it answers."""
    from scoregate.providers import local_server

    state = local_server.serve(project_root(project))
    console.print(f"local model ready at {state.url} (pid {state.pid}, log {state.log})")


@app.command("stop")
def stop(project: ProjectOption = None) -> None:
    """Stop the local model server."""
    from scoregate.providers import local_server

    stopped = local_server.stop(project_root(project))
    console.print("local model stopped" if stopped else "local model was not running")


@app.command("status")
def status(project: ProjectOption = None) -> None:
    """Say whether the local model server runs and answers."""
    from scoregate.providers import local_server

    state = local_server.status(project_root(project))
    word = "healthy" if state.healthy else ("starting or stuck" if state.running else "not running")
    console.print(f"local model {word} at {state.url} (pid {state.pid})")
    if not state.healthy:
        raise typer.Exit(1)
