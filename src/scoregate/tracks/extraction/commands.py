"""The extraction track's commands, as the CLI lists them before it loads any (`tracks/listing.py`)."""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str]] = {
    "extraction": ("app", "Structured-extraction datasets: import and check."),
    "connection-test": (
        "connection_test_command",
        "List the endpoint's models and send one structured request; exit 1 unless the reply obeys the schema.",
    ),
}
"""Command name → (attribute of the track's `cli.py`: a Typer app or a command function, its one-line help)."""
