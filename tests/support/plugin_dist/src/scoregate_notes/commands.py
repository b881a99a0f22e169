"""The track's commands, as `scoregate --help` lists them without loading the track: name → (attribute of
`cli.py`, one-line help)."""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str]] = {
    "terse": ("terse_command", "Count the words of a reply as kind: terse does."),
}
