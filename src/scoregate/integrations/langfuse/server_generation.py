"""Which generation of Langfuse server answers at LANGFUSE_HOST, and how scoregate writes to it.

Recorded on a real v4.16 server (shared/data/langfuse-recordings): a server older than v4.59 answers a JSON
array on POST /api/public/scores with 400 `expected object, received array` (SDK 5's score batches), takes
`score-create` events on POST /api/public/ingestion (SDK 4's path: 207 with a result per event), keeps
SDK 5's JSON-encoded metadata values as quoted text, and lists a run under its dataset only through
POST /api/public/dataset-run-items, which SDK 5's runner never sends. v4.59 and later (and Langfuse Cloud)
take the array. scoregate reads the version from GET /api/public/health; a server that hides it is asked
with an empty array, which an older server refuses with the same 400 and stores nothing either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import httpx

from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.client import SDK_MAJOR, LangfuseSettings

ScoresForm = Literal["array", "ingestion"]
ARRAY_REJECTED = "expected object, received array"
"""What a server older than v4.59 answers to a score array (recorded on v4.16)."""
ARRAY_SCORES_SINCE = (4, 59, 0)
"""The first server version that takes a JSON array of scores (SDK 5's minimum for self-hosted servers)."""
OLDEST_SERVER = (3, 63, 0)
"""The oldest self-hosted server Langfuse documents as processing the traces of its OpenTelemetry-based Python
SDK (v3 and later; scoregate uses 4.x or 5.x): an older one cannot hold a mirrored run."""
PROBE_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 3.0
_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


class ServerTooOld(ScoregateError):
    """The Langfuse server is older than anything scoregate can mirror to."""


def parse_version(text: str | None) -> tuple[int, int, int] | None:
    """The (major, minor, patch) at the start of a version text like `4.16.0` or `v3.125`, or None."""
    found = _VERSION.match((text or "").strip())
    if found is None:
        return None
    major, minor, patch = found.groups()
    return int(major), int(minor), int(patch or 0)


def _shown(version: tuple[int, int, int]) -> str:
    return "v" + ".".join(str(part) for part in version)


@dataclass(frozen=True)
class ServerGeneration:
    """What the server at one host is, as far as scoregate's writes are concerned."""

    version: str
    """What GET /api/public/health answered (e.g. `4.16.0`), or `unknown`."""
    scores: ScoresForm
    """`array`: POST /api/public/scores with a JSON array (v4.59+); `ingestion`: `score-create` events."""
    decided_by: str = "version"
    """`version` (from /api/public/health) or `probe` (the server hid its version; an empty array answered)."""

    @property
    def older(self) -> bool:
        """True for a server older than v4.59: SDK 5's spans are sent in SDK 4's form and scoregate posts the
        dataset run items itself."""
        return self.scores == "ingestion"

    def plan(self, sdk_major: int = SDK_MAJOR) -> list[str]:
        """What scoregate does with this server, one line each (what `scoregate langfuse check` prints)."""
        since = _shown(ARRAY_SCORES_SINCE)
        known = self.version != "unknown"
        head = f"server {self.version}" if known else "server version not shown by /api/public/health"
        if self.scores == "array":
            age = f"{since} or newer" if known else "it takes score arrays"
            return [f"{head} ({age}): scores are posted as batches to /api/public/scores"]
        age = f"older than {since}" if known else "it refuses score arrays"
        lines = [f"{head} ({age}): scores are posted as score-create events to /api/public/ingestion"]
        if sdk_major >= 5:
            lines.append(
                f"langfuse SDK {sdk_major}: trace and observation metadata are sent as SDK 4 writes them, and "
                "scoregate posts the dataset run items itself"
            )
        return lines


def generation_of(version: str | None) -> ServerGeneration | None:
    """The generation a version text names; None when it names none (the server must be probed)."""
    parsed = parse_version(version)
    if parsed is None:
        return None
    scores: ScoresForm = "array" if parsed >= ARRAY_SCORES_SINCE else "ingestion"
    return ServerGeneration(version=str(version).strip(), scores=scores)


def refuse_if_too_old(generation: ServerGeneration, host: str) -> None:
    """Raise ServerTooOld, with the fix, for a server older than scoregate can write to."""
    parsed = parse_version(generation.version)
    if parsed is not None and parsed < OLDEST_SERVER:
        raise ServerTooOld(
            f"Langfuse at {host} is server {generation.version}, older than {_shown(OLDEST_SERVER)}: it cannot take "
            "the OpenTelemetry traces of the langfuse SDK 4.x/5.x, so nothing of a run could be mirrored there",
            hint=f"upgrade the server to {_shown(ARRAY_SCORES_SINCE)} or newer (at least {_shown(OLDEST_SERVER)}), "
            "or run without it: `scoregate run --no-langfuse`",
        )


def read_version(settings: LangfuseSettings, http: httpx.Client) -> str | None:
    """The version GET /api/public/health answers; None when it answers none (a proxy, an error page)."""
    answer = http.get(f"{settings.host}/api/public/health")
    try:
        body = answer.json()
    except ValueError:
        return None
    version = body.get("version") if isinstance(body, dict) and answer.status_code == 200 else None
    return str(version) if version else None


def probe_scores_form(settings: LangfuseSettings, http: httpx.Client) -> ScoresForm:
    """Ask a server that hides its version which score form it takes: an empty array stores nothing on any
    server, and an older one refuses it as it refuses every array."""
    answer = http.post(f"{settings.host}/api/public/scores", json=[], auth=(settings.public_key, settings.secret_key))
    return "ingestion" if answer.status_code == 400 and ARRAY_REJECTED in answer.text else "array"


def read_generation(
    settings: LangfuseSettings, *, http: httpx.Client | None = None, timeout_s: float = PROBE_TIMEOUT_S
) -> ServerGeneration:
    """The server's generation (its version, else a probe); raise ServerTooOld for a server scoregate cannot
    use, and let httpx's errors through when nothing answers (the caller says what that means for it)."""
    client = http or httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, CONNECT_TIMEOUT_S)))
    try:
        version = read_version(settings, client)
        generation = generation_of(version)
        if generation is None:
            generation = ServerGeneration("unknown", probe_scores_form(settings, client), decided_by="probe")
    finally:
        if http is None:
            client.close()
    refuse_if_too_old(generation, settings.host)
    return generation


def check_before_run(settings: LangfuseSettings | None) -> ServerGeneration | None:
    """Before a run's first model call: refuse a server too old for its mirror. A server that does not answer
    now is not refused (the run is kept locally and `langfuse-sync` mirrors it later); None then."""
    if settings is None:
        return None
    try:
        return read_generation(settings)
    except httpx.HTTPError:
        return None
