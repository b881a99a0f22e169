"""Which imported scores a Langfuse project has confirmed, exactly as they were posted (`.scoregate/`).

`scoregate scores import` posts a score again only when what it would post differs from what the server
confirmed before (value, comment, trace, config, time...), so importing an unchanged file writes nothing, like
every other sync. The record is a 16-byte digest per confirmed score and content, per host and project id,
in `.scoregate/langfuse-scores.json` (git-ignored: it describes a server, not the project). Deleting it makes
the next import post everything again (same ids: replaced, never duplicated).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from scoregate.integrations.langfuse.score_sender import ScoreWrite
from scoregate.support.files import replace_atomically
from scoregate.support.key_digests import KeyDigests

RECORD = Path(".scoregate") / "langfuse-scores.json"
FORMAT = 1


def fingerprint(score: ScoreWrite) -> str:
    """What identifies one score as posted: its id, every field sent and its time."""
    return json.dumps([score.body(), score.stamp()], sort_keys=True, ensure_ascii=False)


def _where(host: str, project_id: str) -> str:
    return f"{host} {project_id}"


@dataclass
class PostedScores:
    """The scores one Langfuse project (host and project id) confirmed, as posted."""

    root: Path
    host: str
    project_id: str
    confirmed: KeyDigests = field(default_factory=KeyDigests)

    @classmethod
    def load(cls, root: Path, host: str, project_id: str) -> PostedScores:
        """The record for this host and project; empty when there is none (or it cannot be read: post again)."""
        path = root / RECORD
        found = cls(root, host, project_id)
        try:
            raw = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
            text = (raw.get("projects") or {}).get(_where(host, project_id)) if isinstance(raw, dict) else None
            if isinstance(text, str):
                found.confirmed = KeyDigests.from_text(text)
        except (OSError, ValueError):
            pass  # an unreadable record only costs a re-post of scores the server replaces in place
        return found

    def is_confirmed(self, score: ScoreWrite) -> bool:
        """True when the server confirmed exactly this score before."""
        return fingerprint(score) in self.confirmed

    def record(self, score: ScoreWrite) -> None:
        """Note that the server confirmed this score as it is."""
        self.confirmed.add(fingerprint(score))

    def save(self) -> None:
        """Write the record (the other projects' entries are kept)."""
        path = self.root / RECORD
        try:
            raw = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except (OSError, ValueError):
            raw = {}
        kept = raw.get("projects") if isinstance(raw, dict) else None
        projects: dict[str, str] = dict(kept) if isinstance(kept, dict) else {}
        projects[_where(self.host, self.project_id)] = self.confirmed.to_text()
        path.parent.mkdir(parents=True, exist_ok=True)
        with replace_atomically(path) as out:
            json.dump({"format": FORMAT, "projects": projects}, out, indent=2)
            out.write("\n")
