"""The dataset run of a mirrored run on a Langfuse server older than v4.59 under SDK 5: one run item per trace.

Such a server lists a run under its dataset (its dataset-run views, the run comparison) only from
POST /api/public/dataset-run-items, which SDK 4's runner sends for every item and SDK 5's never does (recorded
on v4.16: with SDK 5 the run was 404 there, "events-only"). scoregate posts them itself here. The server takes
no id of ours for a run item and stores a new row on every POST (18 rows for 9 items after a re-mirror on
v4.16), so the rows it already lists for the run are read first, kept as a 16-byte digest each, and only the
others are posted.
"""

from __future__ import annotations

from typing import Any

import httpx

from scoregate.integrations.langfuse.client import LangfuseSettings
from scoregate.integrations.langfuse.score_sender import error_text
from scoregate.support.key_digests import KeyDigests

PATH = "/api/public/dataset-run-items"
PAGE_LIMIT = 50


def _key(dataset_item_id: str, trace_id: str) -> str:
    return f"{dataset_item_id}\0{trace_id}"


class DatasetRun:
    """One dataset run's items, posted at most once per (dataset item, trace)."""

    def __init__(
        self,
        settings: LangfuseSettings,
        http: httpx.Client,
        *,
        dataset_id: str,
        run_name: str,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self._settings = settings
        self._http = http
        self._auth = (settings.public_key, settings.secret_key)
        self.dataset_id = dataset_id
        self.run_name = run_name
        self._description = description
        self._metadata = metadata
        self._known: KeyDigests | None = None
        self._unlisted = False
        self.posted = 0
        self.errors: list[str] = []

    def _listed(self) -> KeyDigests:
        """The (dataset item, trace) pairs the server lists for the run, read once; none for a new run."""
        if self._known is not None:
            return self._known
        known, page = KeyDigests(), 1
        while True:
            params: dict[str, str | int] = {
                "datasetId": self.dataset_id, "runName": self.run_name, "page": page, "limit": PAGE_LIMIT,
            }  # fmt: skip
            answer = self._http.get(f"{self._settings.host}{PATH}", params=params, auth=self._auth)
            if answer.status_code == 404:  # the run does not exist yet
                break
            answer.raise_for_status()
            body = answer.json()
            rows = body.get("data") or []
            for row in rows:
                known.add(_key(str(row.get("datasetItemId")), str(row.get("traceId") or "")))
            if not rows or page >= int((body.get("meta") or {}).get("totalPages") or 0):
                break
            page += 1
        self._known = known
        return known

    def link(self, dataset_item_id: str, trace_id: str, observation_id: str | None) -> bool:
        """Make sure the run has an item for this trace of this dataset item; False when it could not (the error
        is kept in `errors` and the mirror sends the item again next time)."""
        key = _key(dataset_item_id, trace_id)
        if self._unlisted:  # the run's items could not be read: posting now could store a second row
            return False
        try:
            if key in self._listed():
                return True
            body = {
                "runName": self.run_name,
                "runDescription": self._description,
                "metadata": self._metadata,
                "datasetItemId": dataset_item_id,
                "traceId": trace_id,
                "observationId": observation_id,
            }
            answer = self._http.post(
                f"{self._settings.host}{PATH}", json={k: v for k, v in body.items() if v is not None}, auth=self._auth
            )
        except (httpx.HTTPError, ValueError) as exc:
            self._unlisted = self._known is None
            self._note(f"{type(exc).__name__}: {exc}")
            return False
        if answer.status_code >= 300:
            try:
                detail = error_text(answer.json())
            except ValueError:
                detail = error_text(answer.text)
            self._note(f"HTTP {answer.status_code}: {detail}")
            return False
        self._listed().add(key)
        self.posted += 1
        return True

    def _note(self, message: str) -> None:
        if len(self.errors) < 5 and message not in self.errors:
            self.errors.append(message)
