"""A long API key, for redaction tests: a cut of 150 characters still holds a piece of it."""

from __future__ import annotations

import hashlib

LONG_KEY = "sk-proj-" + "".join(hashlib.sha256(bytes([i])).hexdigest() for i in range(3))[:156]  # 164 characters
