"""The track's command `scoregate terse REPLY`."""

from __future__ import annotations

from typing import Annotated

import typer


def terse_command(reply: Annotated[str, typer.Argument(help="The reply text.")]) -> None:
    """Count the words of a reply as kind: terse does."""
    typer.echo(f"{len(reply.split())} words")
