"""The brevity track's command: the words `kind: brevity` would count in a reply."""

from __future__ import annotations

from typing import Annotated

import typer


def brevity_command(reply: Annotated[str, typer.Argument(help="The reply text.")]) -> None:
    """Count the words of a reply as kind: brevity does."""
    typer.echo(f"{len(reply.split())} words")
