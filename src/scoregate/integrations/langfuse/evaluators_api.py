"""Langfuse's stable evaluator API (`/api/public/v2/evaluators`, `/evaluation-rules`) with errors a user can act on.

Probe first: a server without the API answers its web 404 page, and every judges command refuses with one line
naming the server's version (/api/public/health) and what it needs. The API's errors are `{message, code,
details?}`: a refused body names each field (`details.issues[].path`), a 412 says the judge's model has no LLM
connection in the project, a 429 says when to retry (`details.retryAfterSeconds`), a 404 on an id says the
evaluator or rule is gone. Each is one line; nothing sent before it is lost (the server holds it, and the next
apply finds it by its marker).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.public_api import MissingApi, PublicApi
from scoregate.integrations.langfuse.remote import KEYS_HINT
from scoregate.support.redaction import redact

EVALUATORS = "/api/public/v2/evaluators"
RULES = "/api/public/v2/evaluation-rules"
NEEDS = "Langfuse Cloud or a self-hosted Langfuse server v4.24 or newer"
"""What the API needs (shared/notes/langfuse-v2-evaluators.md: added after v4.16.0, before v4.24.0)."""
PAGE_LIMIT = 100


class NoEvaluatorApi(MissingApi):
    """The server has no stable evaluator API (v2): judges cannot be kept there."""


class EvaluatorGone(ScoregateError):
    """An evaluator or rule id the server no longer holds (deleted in Langfuse)."""


def _issues(body: dict[str, Any]) -> str:
    issues = (body.get("details") or {}).get("issues") or []
    shown = []
    for issue in issues[:3]:
        path = ".".join(str(p) for p in issue.get("path") or []) or "<body>"
        shown.append(f"{path}: {issue.get('message', '')}")
    return "; ".join(shown)


class EvaluatorsApi(PublicApi):
    """One project's evaluators and evaluation rules over the v2 API."""

    def probe(self) -> None:
        """Raise NoEvaluatorApi (one line: the server's version and what is needed) when the server lacks v2."""
        self.v2("reading the evaluators", "GET", EVALUATORS, params={"limit": 1})

    def v2(self, doing: str, method: str, path: str, **kwargs: Any) -> Any:
        """Send one v2 request and return its JSON answer, or raise the one-line error for what went wrong."""
        response, body = self.send(doing, method, path, **kwargs)
        status = response.status_code
        if status < 400:
            return body
        if status in (404, 405) and not isinstance(body, dict):
            raise NoEvaluatorApi(
                f"Langfuse at {self.host} is server {self.server_version()}, which has no evaluator API "
                f"({EVALUATORS}): judges on the server need {NEEDS}; nothing was written"
            )
        if status in (401, 403):
            raise ScoregateError(f"Langfuse at {self.host} rejected the API keys (HTTP {status})", hint=KEYS_HINT)
        raise self._refusal(doing, status, body if isinstance(body, dict) else {"message": redact(response.text)})

    def _refusal(self, doing: str, status: int, body: dict[str, Any]) -> ScoregateError:
        message = str(body.get("message") or "")[:200]
        if status == 404:
            return EvaluatorGone(f"Langfuse has no such object while {doing} (deleted in Langfuse?): {message}")
        if status == 412:
            return ScoregateError(
                f"Langfuse cannot use the judge's model while {doing} (HTTP 412: {message}); add an LLM connection "
                "for that provider in the Langfuse project's settings, or name another judge `model:`"
            )
        if status == 429:
            wait = (body.get("details") or {}).get("retryAfterSeconds")
            after = f"in {wait} s" if wait is not None else "later"
            return ScoregateError(
                f"Langfuse is rate limiting this project while {doing} (HTTP 429); run the command again {after}: "
                "what was written is kept and found again"
            )
        issues = _issues(body)
        detail = f": {issues}" if issues else ""
        return ScoregateError(f"Langfuse refused {doing} (HTTP {status}: {message}){detail}")

    def every(self, doing: str, path: str) -> Iterator[dict[str, Any]]:
        """Every row of a cursor-paged v2 list, newest first."""
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"limit": PAGE_LIMIT, **({"cursor": cursor} if cursor else {})}
            answer = self.v2(doing, "GET", path, params=params)
            yield from answer.get("data") or []
            cursor = (answer.get("meta") or {}).get("cursor")
            if not cursor:
                return

    def evaluators(self) -> list[dict[str, Any]]:
        """Every evaluator of the project, with its latest version's definition."""
        return list(self.every("listing the evaluators", EVALUATORS))

    def create_evaluator(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST a new evaluator (version 1) and return it."""
        answer: dict[str, Any] = self.v2(f"creating evaluator {body['name']!r}", "POST", EVALUATORS, json=body)
        return answer

    def patch_evaluator(self, evaluator_id: str, body: dict[str, Any], doing: str) -> dict[str, Any]:
        """PATCH an evaluator (metadata alone makes no new version) and return it."""
        answer: dict[str, Any] = self.v2(doing, "PATCH", f"{EVALUATORS}/{evaluator_id}", json=body)
        return answer
