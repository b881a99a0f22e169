"""Every track, one line each: the package that holds it.

A track's package has `track.py` (its `TRACK`, which `tracks/registry.py` loads) and, when the track has commands,
`commands.py` (its `COMMANDS`, which the CLI lists at start-up without loading the track). This module imports
nothing, so `scoregate --help` can read it.
"""

from __future__ import annotations

TRACK_PACKAGES: list[str] = [
    "scoregate.tracks.extraction",
    "scoregate.tracks.tags",
]
