"""`scoregate model serve|stop|status`: the embedded local model server."""

from __future__ import annotations

from typing import Annotated

import typer

from scoregate.cli.console import lazy_console
from scoregate.cli.layout import print_wrapped
from scoregate.cli.options import ProjectOption, project_root

app = typer.Typer(help="The embedded local model (llama.cpp serving SmolLM2-135M-Instruct).", no_args_is_help=True)
console = lazy_console()


@app.command("serve")
def serve(project: ProjectOption = None) -> None:
    """Start the local model server in the background and wait until it answers."""
    from scoregate.providers import local_server

    state = local_server.serve(project_root(project))
    word = "ready" if state.healthy else state.state
    print_wrapped(console, f"local model {word} at {state.url} (pid {state.pid}, log {state.log})")


@app.command("stop")
def stop(project: ProjectOption = None) -> None:
    """Stop the local model server."""
    from scoregate.providers import local_server

    stopped = local_server.stop(project_root(project))
    print_wrapped(console, "local model stopped" if stopped else "local model was not running")


NEXT_STEP = {
    "busy": "requests wait their turn; `scoregate model status` again when the run is done",
    "stuck": "restart it: `scoregate model stop`, then `scoregate model serve`",
    "no answer": "wait and ask again, or restart it: `scoregate model stop`, then `scoregate model serve`",
    "starting": "wait a moment and ask again",
    "error": "restart it: `scoregate model stop`, then `scoregate model serve`",
    "not running": "start it with `scoregate model serve`",
}
"""What to do next, by state (see `local_server.probe`)."""


@app.command("status")
def status(
    timeout: Annotated[
        float | None,
        typer.Option(min=0.1, help="Seconds to wait for the model list before calling it busy or stuck [default: 5]."),
    ] = None,
    project: ProjectOption = None,
) -> None:
    """Say whether the local model server runs and answers: healthy, busy, stuck, starting or not running."""
    from scoregate.providers import local_server

    wait = local_server.HEALTH_TIMEOUT_S if timeout is None else timeout
    state = local_server.status(project_root(project), timeout_s=wait)
    pid = f" (pid {state.pid})" if state.pid is not None else ""
    print_wrapped(console, f"local model {state.state} at {state.url}{pid}")
    if state.detail:
        print_wrapped(console, f"{state.detail}; {NEXT_STEP[state.state]}", first="  ")
    if state.state in ("stuck", "starting", "no answer", "error"):
        print_wrapped(console, f"log: {state.log}", first="  ")
    if not state.usable:
        raise typer.Exit(1)
