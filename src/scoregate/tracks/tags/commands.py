"""The tags track's commands, as the CLI lists them before it loads any (`tracks/listing.py`)."""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str]] = {
    "gold": ("app", "Gold labels of the semantic tags track: validate and build."),
}
"""Command name → (attribute of the track's `cli.py`: a Typer app or a command function, its one-line help)."""
