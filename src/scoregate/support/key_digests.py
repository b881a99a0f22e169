"""A compact set of strings (item keys): 16 bytes each, as a sorted numpy array of BLAKE2b digests.

Used where per-item state must outlive a pass over a run (the Langfuse mirror record, the leaderboard): a dict of
100,000 ids costs ~10-40 MB, their digests 1.6 MB. Membership is exact
up to a digest collision (128 bits: about 1e-29 for 100,000 keys).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from typing import TextIO

import numpy as np

DIGEST_BYTES = 16
DIGEST_DTYPE = np.dtype(f"S{DIGEST_BYTES}")
_WRITE_STEP = 3 * 512
"""Digests base64-encoded at a time by `write_text` (a multiple of 3: the pieces join into one base64 text)."""
_MERGE_AT = 256
"""Keys added (or removed) are kept in a small set until this many, then merged into the sorted array."""


def key_digest(key: str) -> bytes:
    """Return the 16-byte digest a key is stored under."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=DIGEST_BYTES).digest()


class KeyDigests:
    """A set of keys that stores only their digests: add, discard, `in`, len, and a base64 text form."""

    def __init__(self, keys: Iterable[str] = ()) -> None:
        self._sorted = np.zeros(0, dtype=DIGEST_DTYPE)
        self._added: set[bytes] = set()
        self._removed: set[bytes] = set()
        for key in keys:
            self.add(key)

    def add(self, key: str) -> None:
        """Add a key."""
        digest = key_digest(key)
        self._removed.discard(digest)
        if not self._in_sorted(digest):
            self._added.add(digest)
            if len(self._added) >= _MERGE_AT:
                self._merge()

    def discard(self, key: str) -> None:
        """Remove a key when present."""
        digest = key_digest(key)
        self._added.discard(digest)
        if self._in_sorted(digest):
            self._removed.add(digest)
            if len(self._removed) >= _MERGE_AT:
                self._merge()

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        digest = key_digest(key)
        return digest in self._added or (digest not in self._removed and self._in_sorted(digest))

    def __len__(self) -> int:
        return len(self._sorted) + len(self._added) - len(self._removed)

    def update(self, other: KeyDigests) -> int:
        """Add every key of `other`; return how many were not here."""
        self._merge()
        other._merge()
        new = int(np.count_nonzero(~np.isin(other._sorted, self._sorted)))
        self._sorted = np.union1d(self._sorted, other._sorted)
        return new

    def to_text(self) -> str:
        """Return the digests, sorted, as one base64 string."""
        self._merge()
        return base64.b64encode(self._sorted.tobytes()).decode("ascii")

    def write_text(self, out: TextIO) -> None:
        """Write `to_text()` to `out` in pieces of 32 kB (the whole text is never held)."""
        self._merge()
        for start in range(0, len(self._sorted), _WRITE_STEP):
            out.write(base64.b64encode(self._sorted[start : start + _WRITE_STEP].tobytes()).decode("ascii"))

    @classmethod
    def from_text(cls, text: str) -> KeyDigests:
        """Return the set `to_text` wrote; raise ValueError when the text is not such a string."""
        raw = base64.b64decode(text.encode("ascii"), validate=True)
        if len(raw) % DIGEST_BYTES:
            raise ValueError(f"{len(raw)} bytes is not a whole number of {DIGEST_BYTES}-byte digests")
        digests = cls()
        digests._sorted = np.unique(np.frombuffer(raw, dtype=DIGEST_DTYPE))
        return digests

    def _in_sorted(self, digest: bytes) -> bool:
        at = int(np.searchsorted(self._sorted, digest))
        return at < len(self._sorted) and bytes(self._sorted[at]).ljust(DIGEST_BYTES, b"\0") == digest

    def _merge(self) -> None:
        kept = self._sorted
        if self._removed:
            gone = np.array(sorted(self._removed), dtype=DIGEST_DTYPE)
            kept = kept[~np.isin(kept, gone)]
        if self._added:  # each added digest is absent from the array (`add` checks): insert them in order
            new = np.sort(np.array(list(self._added), dtype=DIGEST_DTYPE))
            kept = np.insert(kept, np.searchsorted(kept, new), new)
        self._sorted = kept
        self._added, self._removed = set(), set()
