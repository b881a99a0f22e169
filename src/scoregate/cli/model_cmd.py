"""`scoregate model serve|stop|status`: the embedded local model server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scoregate.cli.layout import print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

app = typer.Typer(help="The embedded local model (llama.cpp serving SmolLM2-135M-Instruct).", no_args_is_help=True)
console = lazy_console()


def _whose(owner: str | None, root: Path) -> str:
    """Say which project started the server: this one, another (named), or unknown."""
    if owner is None:
        return "started outside `scoregate model serve` or before it recorded its project"
    if Path(owner) == root.resolve():
        return "started by this project"
    return f"started by the project in {owner}"


SHARED_HINT = (
    "its requests and this project's queue on one server; for a server of this project's own, set "
    "`settings.local_port` in scoregate.yaml (or SCOREGATE_LOCAL_PORT) to a free port, then `scoregate model serve`"
)


@app.command("serve")
def serve_command(
    no_shared_hint: Annotated[
        bool,
        typer.Option(
            "--no-shared-hint",
            help="Leave how to get a server of this project's own to the run that follows (`make experiment`).",
        ),
    ] = False,
    project: ProjectOption = None,
) -> None:
    """Start the local model server in the background and wait until it answers."""
    from scoregate.app import LocalModel

    root = project_root(project)
    state = LocalModel(root).serve()
    word = "ready" if state.healthy else state.state
    print_wrapped(
        console, f"local model {word} at {state.url} (pid {state.pid}, log {state.log}); {_whose(state.owner, root)}"
    )
    if state.detail:
        print_wrapped(console, state.detail, first="  ")
    if state.owner is not None and Path(state.owner) != root.resolve() and not no_shared_hint:
        print_wrapped(console, SHARED_HINT, first="  ", style="yellow")


@app.command("stop")
def stop_command(project: ProjectOption = None) -> None:
    """Stop the local model server."""
    from scoregate.app import LocalModel

    stopped = LocalModel(project_root(project)).stop()
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
def status_command(
    timeout: Annotated[
        float | None,
        typer.Option(min=0.1, help="Seconds to wait for the model list before calling it busy or stuck [default: 5]."),
    ] = None,
    project: ProjectOption = None,
) -> None:
    """Say whether the local model server runs and answers: healthy, busy, stuck, starting or not running."""
    from scoregate.app import LocalModel

    root = project_root(project)
    state = LocalModel(root).status(timeout_s=timeout)
    pid = f" (pid {state.pid}); {_whose(state.owner, root)}" if state.pid is not None else ""
    print_wrapped(console, f"local model {state.state} at {state.url}{pid}")
    if state.detail:
        print_wrapped(console, f"{state.detail}; {NEXT_STEP[state.state]}", first="  ")
    if state.running and state.owner is not None and Path(state.owner) != root.resolve():
        print_wrapped(console, SHARED_HINT, first="  ")
    if state.state in ("stuck", "starting", "no answer", "error"):
        print_wrapped(console, f"log: {state.log}", first="  ")
    if not state.usable:
        raise typer.Exit(1)
