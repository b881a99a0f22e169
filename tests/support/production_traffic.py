"""Production traffic on the fake Langfuse, made by the reference app (examples/production_app.py) in-process."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from langfuse import Langfuse
from openai import OpenAI

from support.fake_langfuse import FakeLangfuse
from support.scripted_openai import ScriptedOpenAI

APP_PATH = Path(__file__).resolve().parents[2] / "examples" / "production_app.py"
CHAT = [{"role": "user", "content": "Summarize {{title}}: {{transcript}}"}]
LIVE_PROMPT = "summarization-catchup"


def add_live_experiment(
    data: dict[str, Any],
    *,
    evaluators: Iterable[str] = ("counters_v1",),
    environment: str | None = None,
    redact: list[str] | None = None,
) -> None:
    """Add to a scoregate.yaml being edited the `live` experiment (smoke_v1 through LIVE_PROMPT) and its
    `production:` entry: the reference app's traces of the last hour, their title and transcript as the input."""
    data["experiments"]["live"] = {"dataset": "smoke_v1", "prompt": LIVE_PROMPT, "evaluators": list(evaluators)}
    scope = {"environment": environment} if environment is not None else {}
    entry: dict[str, Any] = {
        "filter": {"trace_name": "production-app", **scope, "window": {"last": "1h"}},
        "mapping": {"input": {"title": "$.input.title", "transcript": "$.input.transcript"}},
    }
    if redact is not None:
        entry["redact"] = redact
    data["production"] = {"live": entry}


def production_app() -> ModuleType:
    """The reference app's module (examples/ is not a package)."""
    if "production_app" not in sys.modules:
        spec = importlib.util.spec_from_file_location("production_app", APP_PATH)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["production_app"] = module
        spec.loader.exec_module(module)
    return sys.modules["production_app"]


def langfuse_client(fake: FakeLangfuse) -> Langfuse:
    """An SDK client on the fake, flushing quickly."""
    return Langfuse(public_key=fake.public_key, secret_key=fake.secret_key, base_url=fake.base_url, flush_interval=0.2)


def publish_prompt(fake: FakeLangfuse, name: str = "digest", labels: Iterable[str] = ("production", "canary")) -> None:
    """One chat prompt version per label, in order (v1 = the first label)."""
    client = langfuse_client(fake)
    for label in labels:
        client.create_prompt(name=name, prompt=CHAT, type="chat", labels=[label])  # type: ignore[arg-type]
    client.shutdown()


def send_traffic(
    fake: FakeLangfuse,
    model: ScriptedOpenAI,
    inputs: list[dict[str, Any]],
    *,
    prompt: str = "digest",
    label: str = "production",
    sessions: list[str] | None = None,
    **settings: Any,
) -> list[Any]:
    """Send one request per input (of `sessions[i]` when given) through the reference app; return its replies (trace
    ids, prompt versions, labels, sessions)."""
    app = production_app()
    chosen = app.AppSettings(prompt=prompt, label=label, base_url=model.url, **settings)
    client = langfuse_client(fake)
    openai = OpenAI(base_url=model.url, api_key="sk-test")
    ids = sessions if sessions is not None else [None] * len(inputs)
    try:
        return [
            app.handle_request(variables, chosen, langfuse=client, model=openai, session_id=session)
            for variables, session in zip(inputs, ids, strict=True)
        ]
    finally:
        client.flush()


def log_trace(fake: FakeLangfuse, variables: dict[str, Any], output: str, *, prompt: str = "digest") -> str:
    """Log one trace of the reference app's shape without calling a model (for inputs no model client can send,
    such as a lone surrogate); return its id."""
    from langfuse import propagate_attributes

    client = langfuse_client(fake)
    linked = client.get_prompt(prompt, label="production", type="chat", cache_ttl_seconds=0)
    with (
        client.start_as_current_observation(name="production-app", input=variables) as root,
        propagate_attributes(trace_name="production-app", tags=["production-app"], environment="production"),
    ):
        with client.start_as_current_observation(name="answer", as_type="generation", prompt=linked) as generation:
            generation.update(output=output)
        root.update(output=output)
        trace_id = root.trace_id
    client.flush()
    return str(trace_id)
