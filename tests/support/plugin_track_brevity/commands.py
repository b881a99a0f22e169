"""The brevity track's command, as the CLI lists it before it loads the track."""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str]] = {
    "brevity": ("brevity_command", "Count the words of a reply as kind: brevity does."),
}
