"""A replay's record: the tally and verdict written as `replay.json` into the candidate run's folder."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

Verdict = Literal["better", "not worse", "worse"]
REPLAY_FILE = "replay.json"
"""Written into the candidate run's folder: the evidence a `replay:` promotion rule reads."""


@dataclass
class Replay:
    """One replay: the two runs, the pairwise tally over every item (failures as losses) and the verdict."""

    experiment: str
    prompt: str
    """The production version, `name@version`."""
    candidate_prompt: str
    candidate_run: str
    logged_run: str
    items: int
    """Every production trace fetched: replayed or not (the denominator)."""
    wins: int
    losses: int
    ties: int
    failed: dict[str, int] = field(default_factory=dict)
    """Losses that were no judgement, by reason (not replayed, not judged)."""
    win_rate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float = 0.95
    verdict: Verdict = "not worse"
    skipped: list[tuple[str, str]] = field(default_factory=list)
    mirrors: dict[str, list[str]] = field(default_factory=dict)
    """The sinks each run was mirrored to, by run id."""
    mirror_errors: dict[str, str] = field(default_factory=dict)
    """`run id sink` → why that mirror failed (`scoregate sync RUN --to SINK` redoes it)."""
    redacted: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (`--json`, and `replay.json` in the candidate run)."""
        return asdict(self)

    def rate_words(self) -> str:
        """`win rate 0.38 (95% CI 0.09 to 0.78) over 4 items`."""

        def rate(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.2f}"

        return (
            f"win rate {rate(self.win_rate)} ({self.confidence:.0%} CI {rate(self.ci_low)} to {rate(self.ci_high)}) "
            f"over {self.items} {'item' if self.items == 1 else 'items'}"
        )


def write_replay(directory: Path, replay: Replay) -> None:
    """Write the replay into the candidate run's folder."""
    (directory / REPLAY_FILE).write_text(json.dumps(replay.to_dict(), indent=2) + "\n", encoding="utf-8")


def read_replay(directory: Path) -> Replay | None:
    """The replay recorded in a run's folder, or None when the run is no replay (or its record is unreadable)."""
    try:
        raw = json.loads((directory / REPLAY_FILE).read_text(encoding="utf-8"))
        known = {f.name for f in fields(Replay)}
        return Replay(**{k: v for k, v in raw.items() if k in known})
    except (OSError, ValueError, TypeError):
        return None
