"""A reference production app: the shape of traffic scoregate reads back from Langfuse.

Each request fetches the prompt by label from Langfuse (`production` unless told otherwise), fills it with the
request's variables, calls the model (the embedded local model by default, as `make experiment` does) and logs
one trace: a root span named after the app (its input the variables, its output the answer) holding a
generation linked to the prompt version it used. That is the shape scoregate's `production:` section maps
(docs/production/index.md): `$.input.<variable>` for the item's input, `$.output` for the logged answer.

It needs only the Langfuse SDK and the OpenAI client, like an app of your own:

    python examples/production_app.py --prompt summarization-catchup --dataset datasets/smoke_v1.jsonl -n 5

The label is a parameter (`--label`, `label=`). Under a rollout (`scoregate rollout start`), `--canary-share P`
(`canary_share=` in `AppSettings`) picks it per request instead: the request's session id goes through
`canary_label(session_id, share, salt=prompt)` (scoregate.support.canary_assignment, standard library only), so a
session is served `canary` or `production` the same way every time, and the trace carries the session id
(Langfuse `sessionId`) for the rollout's split check:

    python examples/production_app.py --prompt summarization-catchup --dataset datasets/smoke_v1.jsonl \
        -n 40 --sessions 20 --canary-share 50%
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_PORT = 8765
"""The embedded local model's port (`scoregate model serve`), unless SCOREGATE_LOCAL_PORT says otherwise."""
TRACE_NAME = "production-app"


def local_model_url() -> str:
    """The OpenAI-compatible URL of the embedded local model: SCOREGATE_LOCAL_PORT, default 8765."""
    port = os.environ.get("SCOREGATE_LOCAL_PORT", "").strip() or str(DEFAULT_PORT)
    return f"http://127.0.0.1:{port}/v1"


@dataclass(frozen=True)
class AppSettings:
    """Where the app sends its requests and how it names its traces."""

    prompt: str
    label: str = "production"
    model: str = "smollm2-135m"
    base_url: str = field(default_factory=local_model_url)
    api_key: str = "local"
    trace_name: str = TRACE_NAME
    tags: tuple[str, ...] = ("production-app",)
    environment: str = "production"
    max_tokens: int = 256
    canary_share: float | None = None
    """Under a rollout: the share (0 to 1) of sessions served `canary`; `label` is then not used."""

    def label_for(self, session_id: str | None) -> str:
        """The label this request is served: `label`, or under a rollout the session's sticky `canary_label`."""
        if self.canary_share is None:
            return self.label
        from scoregate.support.canary_assignment import canary_label

        if session_id is None:
            raise ValueError("a canary share needs each request's session id")
        return canary_label(session_id, self.canary_share, salt=self.prompt)


@dataclass(frozen=True)
class Reply:
    """One handled request: its trace, the prompt version that answered it, the answer, its label and session."""

    trace_id: str
    prompt_version: int
    output: str
    label: str = "production"
    session_id: str | None = None


def _messages(compiled: Any) -> list[dict[str, str]]:
    """The chat messages of a compiled prompt (a chat prompt's list, or a text prompt as one user message)."""
    if isinstance(compiled, str):
        return [{"role": "user", "content": compiled}]
    return [{"role": str(m["role"]), "content": str(m["content"])} for m in compiled]


def handle_request(
    variables: dict[str, Any],
    settings: AppSettings,
    *,
    langfuse: Any,
    model: Any,
    session_id: str | None = None,
) -> Reply:
    """Answer one request with the prompt under its label (`settings.label_for(session_id)`); log it as a trace of
    the session, linked to that prompt version."""
    from langfuse import propagate_attributes

    label = settings.label_for(session_id)
    prompt = langfuse.get_prompt(settings.prompt, label=label, type="chat")
    if getattr(prompt, "is_fallback", False):
        raise RuntimeError(f"prompt {settings.prompt!r} with label {label!r} is not on Langfuse")
    messages = _messages(prompt.compile(**variables))
    with (
        langfuse.start_as_current_observation(name=settings.trace_name, input=variables) as root,
        propagate_attributes(
            trace_name=settings.trace_name,
            tags=list(settings.tags),
            environment=settings.environment,
            session_id=session_id,
        ),
    ):
        with langfuse.start_as_current_observation(
            name="answer",
            as_type="generation",
            model=settings.model,
            model_parameters={"max_tokens": settings.max_tokens},
            prompt=prompt,
            input=messages,
        ) as generation:
            answer = model.chat.completions.create(
                model=settings.model, messages=messages, max_tokens=settings.max_tokens
            )
            text = answer.choices[0].message.content or ""
            usage = answer.usage
            generation.update(
                output=text,
                usage_details={"input": usage.prompt_tokens, "output": usage.completion_tokens} if usage else None,
            )
        root.update(output=text)
        return Reply(root.trace_id, int(prompt.version), text, label=label, session_id=session_id)


def dataset_inputs(path: Path) -> Iterator[dict[str, Any]]:
    """The `input` of every item of a dataset file (JSONL), in order."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)["input"]


def session_ids(count: int, sessions: int | None, prefix: str) -> list[str]:
    """The session id of each of `count` requests: `PREFIX-K`, cycling through `sessions` ids (default: one each)."""
    return [f"{prefix}-{i % (sessions or count)}" for i in range(count)]


def send_requests(
    inputs: Iterable[dict[str, Any]], count: int, settings: AppSettings, sessions: Sequence[str] | None = None
) -> list[Reply]:
    """Send `count` requests (cycling through `inputs`, request i of session `sessions[i]`) through the app; flush
    the traces before returning."""
    from langfuse import Langfuse
    from openai import OpenAI

    langfuse = Langfuse(sample_rate=1.0, environment=settings.environment)
    model = OpenAI(base_url=settings.base_url, api_key=settings.api_key, max_retries=2, timeout=300)
    pool = list(inputs)
    if not pool:
        raise ValueError("no inputs to send")
    chosen = list(sessions) if sessions is not None else [None] * count
    try:
        return [
            handle_request(variables, settings, langfuse=langfuse, model=model, session_id=session)
            for variables, session in zip(itertools.islice(itertools.cycle(pool), count), chosen, strict=True)
        ]
    finally:
        langfuse.flush()
        langfuse.shutdown()


def main(argv: Sequence[str] | None = None) -> int:
    """Send N requests from a dataset's inputs through the app; print one line per trace."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt", required=True, help="the prompt's name on Langfuse")
    parser.add_argument("--label", default="production", help="the prompt label to serve (default: production)")
    parser.add_argument("--dataset", type=Path, required=True, help="a dataset JSONL whose item inputs are requests")
    parser.add_argument("-n", "--requests", type=int, default=5, help="how many requests to send (default: 5)")
    parser.add_argument("--model", default="smollm2-135m", help="the model name sent to the endpoint")
    parser.add_argument(
        "--base-url", default=None, help="an OpenAI-compatible URL, key in OPENAI_API_KEY (default: the local model)"
    )
    parser.add_argument("--trace-name", default=TRACE_NAME, help=f"the traces' name (default: {TRACE_NAME})")
    parser.add_argument("--environment", default="production", help="the traces' environment (default: production)")
    parser.add_argument(
        "--canary-share",
        default=None,
        help="under a rollout: the share of sessions served `canary` (10%% or 0.1); the rest get `production`",
    )
    parser.add_argument("--sessions", type=int, default=None, help="how many sessions the requests cycle through")
    parser.add_argument(
        "--session-prefix", default=None, help="session ids are PREFIX-0, PREFIX-1, ... (default: a random prefix)"
    )
    args = parser.parse_args(argv)
    try:
        share = None if args.canary_share is None else parse_share(args.canary_share)
    except ValueError as exc:
        print(f"--canary-share: {exc}", file=sys.stderr)
        return 2
    if not all(os.environ.get(v) for v in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY")):
        print("set LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_HOST first", file=sys.stderr)
        return 2
    settings = AppSettings(
        prompt=args.prompt,
        label=args.label,
        model=args.model,
        base_url=args.base_url or local_model_url(),
        api_key=(os.environ.get("OPENAI_API_KEY") if args.base_url else None) or "local",
        trace_name=args.trace_name,
        environment=args.environment,
        canary_share=share,
    )
    sessions = session_ids(args.requests, args.sessions, args.session_prefix or uuid.uuid4().hex[:8])
    replies = send_requests(dataset_inputs(args.dataset), args.requests, settings, sessions)
    for reply in replies:
        served = f"trace {reply.trace_id} {settings.prompt}@{reply.prompt_version}"
        print(f"{served} {reply.label} {reply.session_id}" if share is not None else
              f"{served} ({len(reply.output)} characters)")  # fmt: skip
    if share is not None:
        on_canary = {r.session_id for r in replies if r.label == "canary"}
        print(f"{len(on_canary)} of {len(set(sessions))} sessions on canary (share {share:.0%})")
    return 0


def parse_share(text: str) -> float:
    """A share written `10%` or `0.1`, as a fraction from 0 to 1."""
    value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    if not 0 <= value <= 1:
        raise ValueError(f"a share from 0% to 100%, not {text!r}")
    return value


if __name__ == "__main__":
    raise SystemExit(main())
