"""Live rollout traffic on the Langfuse double: calls linked to a prompt version with a session, and scores posted
onto their traces the way `traces score` or a server-side judge does (one score object per request, which every
server takes)."""

from __future__ import annotations

import hashlib

import httpx

from support.fake_langfuse import FakeLangfuse
from support.production_traffic import langfuse_client


def log_call(
    fake: FakeLangfuse,
    prompt: str,
    version: int,
    session: str,
    *,
    error: bool = False,
    cost_usd: float | None = None,
    environment: str = "production",
) -> str:
    """Log one app call of `prompt` vN in `session` (a root span holding a linked generation); return its trace id."""
    from langfuse import propagate_attributes

    client = langfuse_client(fake)
    linked = client.get_prompt(prompt, version=version, type="chat", cache_ttl_seconds=0)
    with (
        client.start_as_current_observation(name="production-app", input={"q": session}) as root,
        propagate_attributes(trace_name="production-app", environment=environment, session_id=session),
    ):
        with client.start_as_current_observation(name="answer", as_type="generation", prompt=linked) as generation:
            generation.update(
                output="answer",
                level="ERROR" if error else "DEFAULT",
                cost_details={"total": cost_usd} if cost_usd is not None else None,
            )
        root.update(output="answer")
        trace_id = str(root.trace_id)
    client.flush()
    return trace_id


def post_score(fake: FakeLangfuse, trace_id: str, name: str, value: float) -> None:
    """Post one numeric score onto a trace with an id derived from both (posting it again replaces it)."""
    score_id = hashlib.sha256(f"{trace_id}:{name}".encode()).hexdigest()[:32]
    body = {"id": score_id, "traceId": trace_id, "name": name, "value": value, "dataType": "NUMERIC"}
    answer = httpx.post(
        f"{fake.base_url}/api/public/scores", json=body, auth=(fake.public_key, fake.secret_key), timeout=30
    )
    answer.raise_for_status()
