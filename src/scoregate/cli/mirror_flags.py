"""`--no-mirror NAME` (repeatable) for the commands that mirror, and the old per-tracker switches it replaces
(`--no-mlflow`, `--no-langfuse`), kept as documented aliases."""

from __future__ import annotations

from typing import Annotated

import typer

NoMirrorOption = Annotated[
    list[str] | None,
    typer.Option(
        "--no-mirror",
        metavar="NAME",
        help="Do not mirror to the sink NAME (mlflow, langfuse or a plug-in's; repeatable).",
    ),
]


def mirrors_off(no_mirror: list[str] | None, *, no_mlflow: bool = False, no_langfuse: bool = False) -> frozenset[str]:
    """The sinks a command must not mirror to: each `--no-mirror NAME` (the use case checks them against the
    registered sinks), plus the aliases `--no-mlflow` (= `--no-mirror mlflow`) and `--no-langfuse`."""
    aliases = [name for name, off in (("mlflow", no_mlflow), ("langfuse", no_langfuse)) if off]
    return frozenset([*(no_mirror or []), *aliases])
