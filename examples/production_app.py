"""A reference production app: the shape of traffic scoregate reads back from Langfuse.

Each request fetches the prompt by label from Langfuse (`production` unless told otherwise), fills it with the
request's variables, calls the model (the embedded local model by default, as `make experiment` does) and logs
one trace: a root span named after the app (its input the variables, its output the answer) holding a
generation linked to the prompt version it used. That is the shape scoregate's `production:` section maps
(docs/production/index.md): `$.input.<variable>` for the item's input, `$.output` for the logged answer.

It needs only the Langfuse SDK and the OpenAI client, like an app of your own:

    python examples/production_app.py --prompt summarization-catchup --dataset datasets/smoke_v1.jsonl -n 5

The label is a parameter (`--label`, `label=`): an app that splits traffic between `production` and a
`canary` passes the label it chose for this request.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
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


@dataclass(frozen=True)
class Reply:
    """One handled request: its trace, the prompt version that answered it, the answer."""

    trace_id: str
    prompt_version: int
    output: str


def _messages(compiled: Any) -> list[dict[str, str]]:
    """The chat messages of a compiled prompt (a chat prompt's list, or a text prompt as one user message)."""
    if isinstance(compiled, str):
        return [{"role": "user", "content": compiled}]
    return [{"role": str(m["role"]), "content": str(m["content"])} for m in compiled]


def handle_request(variables: dict[str, Any], settings: AppSettings, *, langfuse: Any, model: Any) -> Reply:
    """Answer one request with the prompt under `settings.label`; log it as a trace linked to that prompt version."""
    from langfuse import propagate_attributes

    prompt = langfuse.get_prompt(settings.prompt, label=settings.label, type="chat")
    if getattr(prompt, "is_fallback", False):
        raise RuntimeError(f"prompt {settings.prompt!r} with label {settings.label!r} is not on Langfuse")
    messages = _messages(prompt.compile(**variables))
    with (
        langfuse.start_as_current_observation(name=settings.trace_name, input=variables) as root,
        propagate_attributes(
            trace_name=settings.trace_name, tags=list(settings.tags), environment=settings.environment
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
        return Reply(trace_id=root.trace_id, prompt_version=int(prompt.version), output=text)


def dataset_inputs(path: Path) -> Iterator[dict[str, Any]]:
    """The `input` of every item of a dataset file (JSONL), in order."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)["input"]


def send_requests(inputs: Iterable[dict[str, Any]], count: int, settings: AppSettings) -> list[Reply]:
    """Send `count` requests (cycling through `inputs`) through the app; flush the traces before returning."""
    from langfuse import Langfuse
    from openai import OpenAI

    langfuse = Langfuse(sample_rate=1.0, environment=settings.environment)
    model = OpenAI(base_url=settings.base_url, api_key=settings.api_key, max_retries=2, timeout=300)
    pool = list(inputs)
    if not pool:
        raise ValueError("no inputs to send")
    try:
        return [
            handle_request(variables, settings, langfuse=langfuse, model=model)
            for variables in itertools.islice(itertools.cycle(pool), count)
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
    args = parser.parse_args(argv)
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
    )
    replies = send_requests(dataset_inputs(args.dataset), args.requests, settings)
    for reply in replies:
        print(f"trace {reply.trace_id} {settings.prompt}@{reply.prompt_version} ({len(reply.output)} characters)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
