"""On-disk response cache keyed by what changes a model's answer (never by timeouts or concurrency)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import asdict
from pathlib import Path

from scoregate.providers.base import Completion, CompletionRequest


def cache_key(model: str, endpoint: str, request: CompletionRequest) -> str:
    """Return the hash of model, endpoint, messages, sampling parameters and schema."""
    blob = json.dumps(
        [
            model,
            endpoint,
            request.messages,
            request.temperature,
            request.max_tokens,
            request.top_p,
            request.json_schema,
            request.schema_strict,
            request.extra,
        ],
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()  # a reply may hold a lone surrogate


class ResponseCache:
    """A SQLite table of completions; safe to share between runs of one project."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, completion TEXT, "
            "created REAL DEFAULT (unixepoch('subsec')))"
        )

    def get(self, key: str) -> Completion | None:
        """Return the cached completion for `key`, marked as cached, or None."""
        row = self._db.execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        completion = Completion(**json.loads(row[0]))
        completion.cached = True
        return completion

    def put(self, key: str, model: str, completion: Completion) -> None:
        """Store a completion under `key`."""
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, model, completion) VALUES (?, ?, ?)",
            (key, model, json.dumps(asdict(completion))),
        )

    def stats(self) -> tuple[int, int]:
        """Return (entries, bytes on disk)."""
        count = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        return count, self.path.stat().st_size if self.path.exists() else 0

    def clear(self) -> int:
        """Delete every entry; return how many there were."""
        count = self.stats()[0]
        self._db.execute("DELETE FROM responses")
        self._db.execute("VACUUM")
        return int(count)

    def close(self) -> None:
        """Close the database."""
        self._db.close()
