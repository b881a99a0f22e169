"""The transcripts a docs page shows of `scoregate` commands on the shipped demo project, and how to match them."""

from __future__ import annotations

from pathlib import Path

from support.markdown_docs import FENCE, read

DEMO = "examples/scripted-demo"


def transcripts(page: Path) -> dict[str, list[str]]:
    """Each `$ scoregate ...` text block of the page on the demo project: the command → the lines it shows."""
    shown = {}
    for kind, body in FENCE.findall(read(page)):
        lines = body.rstrip("\n").splitlines()
        if kind == "text" and lines and lines[0].startswith("$ scoregate ") and DEMO in lines[0]:
            shown[lines[0].removeprefix("$ ")] = [line for line in lines[1:] if line.strip() not in ("…", "")]
    return shown


def unchecked(shown: dict[str, list[str]]) -> list[str]:
    """The commands whose transcript shows no line to check (only `…`): an example that proves nothing."""
    return [command for command, lines in shown.items() if not lines]


def in_order(expected: list[str], actual: list[str]) -> list[str]:
    """The expected lines not found in `actual` in the same order (each after the one before)."""
    missing, at = [], 0
    for line in expected:
        found = next((i for i in range(at, len(actual)) if actual[i] == line), None)
        if found is None:
            missing.append(line)
        else:
            at = found + 1
    return missing
