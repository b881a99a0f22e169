"""The options that name a human-label plan (`--labels N` of `scoregate plan` and of `annotate queue`)."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["HumanKeyOption", "JudgeKeyOption", "PassAtOption"]

JudgeKeyOption = Annotated[str | None, typer.Option("--judge-key", help="With --labels: the pass/fail judge score.")]
HumanKeyOption = Annotated[str | None, typer.Option("--human-key", help="With --labels: the 0/1 human rating.")]
PassAtOption = Annotated[
    float | None, typer.Option("--pass-at", help="With --labels: a score at least this passes (judge and human).")
]
