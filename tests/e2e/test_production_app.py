"""The reference production app (examples/production_app.py), run as a user runs it, against the fake Langfuse and a
scripted model: each request is one trace with the variables as its input, linked to the labelled prompt version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from langfuse import Langfuse

from support.fake_langfuse import FakeLangfuse
from support.scripted_openai import ScriptedOpenAI

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "examples" / "production_app.py"


def _run_app(fake: FakeLangfuse, model: ScriptedOpenAI, dataset: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **fake.env(), "OPENAI_API_KEY": "sk-test"}
    command = [sys.executable, str(APP), "--dataset", str(dataset), "--base-url", model.url, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)


def _publish_prompts(fake: FakeLangfuse) -> None:
    client = Langfuse(public_key=fake.public_key, secret_key=fake.secret_key, base_url=fake.base_url)
    chat = [{"role": "user", "content": "Summarize {{title}}: {{transcript}}"}]
    client.create_prompt(name="digest", prompt=chat, type="chat", labels=["production"])  # type: ignore[arg-type]
    client.create_prompt(name="digest", prompt=chat, type="chat", labels=["canary"])  # type: ignore[arg-type]
    client.shutdown()


def _roots_and_generations(fake: FakeLangfuse) -> tuple[dict[str, dict[str, object]], list[dict[str, object]]]:
    spans = fake.state.spans
    roots = {s["traceId"]: s["attributes"] for s in spans if s["parentSpanId"] is None}
    generations = [s["attributes"] for s in spans if s["attributes"].get("langfuse.observation.type") == "generation"]
    return roots, generations


def test_each_request_is_a_trace_with_its_variables_linked_to_the_production_prompt(
    fake_langfuse: FakeLangfuse, scripted_server: ScriptedOpenAI, tmp_path: Path
) -> None:
    _publish_prompts(fake_langfuse)
    dataset = tmp_path / "requests.jsonl"
    rows = [{"id": f"r{i}", "input": {"title": f"Episode {i}", "transcript": f"Talk {i}."}} for i in range(2)]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))

    done = _run_app(fake_langfuse, scripted_server, dataset, "--prompt", "digest", "-n", "3")

    assert done.returncode == 0, done.stderr
    assert done.stdout.count("digest@1") == 3
    roots, generations = _roots_and_generations(fake_langfuse)
    assert len(roots) == 3
    inputs = sorted(json.loads(str(a["langfuse.observation.input"]))["title"] for a in roots.values())
    assert inputs == ["Episode 0", "Episode 0", "Episode 1"]  # cycled through the dataset's inputs
    assert all(a["langfuse.trace.name"] == "production-app" for a in roots.values())
    assert all(a["langfuse.environment"] == "production" for a in roots.values())
    assert [(g["langfuse.observation.prompt.name"], g["langfuse.observation.prompt.version"]) for g in generations] == [
        ("digest", 1)
    ] * 3
    assert "Summarize Episode 0: Talk 0." in scripted_server.task_requests()[0].text


def test_the_label_is_a_parameter_the_canary_version_answers_under_its_label(
    fake_langfuse: FakeLangfuse, scripted_server: ScriptedOpenAI, tmp_path: Path
) -> None:
    _publish_prompts(fake_langfuse)
    dataset = tmp_path / "requests.jsonl"
    dataset.write_text(json.dumps({"id": "r", "input": {"title": "T", "transcript": "x"}}) + "\n")

    done = _run_app(fake_langfuse, scripted_server, dataset, "--prompt", "digest", "--label", "canary", "-n", "1")

    assert done.returncode == 0, done.stderr
    _, generations = _roots_and_generations(fake_langfuse)
    assert [g["langfuse.observation.prompt.version"] for g in generations] == [2]


def test_without_langfuse_keys_it_says_what_to_set(scripted_server: ScriptedOpenAI, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    command = [sys.executable, str(APP), "--prompt", "p", "--dataset", str(tmp_path / "x.jsonl")]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "set LANGFUSE_PUBLIC_KEY" in done.stderr


def test_a_canary_share_splits_sessions_stickily_and_links_each_trace_to_its_labels_version(
    fake_langfuse: FakeLangfuse, scripted_server: ScriptedOpenAI, tmp_path: Path
) -> None:
    from scoregate.support.canary_assignment import canary_label

    _publish_prompts(fake_langfuse)
    dataset = tmp_path / "requests.jsonl"
    dataset.write_text(json.dumps({"id": "r", "input": {"title": "T", "transcript": "x"}}) + "\n")

    args = ("--prompt", "digest", "--canary-share", "50%", "--sessions", "20", "-n", "40")
    done = _run_app(fake_langfuse, scripted_server, dataset, *args)

    assert done.returncode == 0, done.stderr
    spans = fake_langfuse.state.spans
    session_of = {s["traceId"]: s["attributes"].get("session.id") for s in spans if s["parentSpanId"] is None}
    version_of = {
        s["traceId"]: s["attributes"]["langfuse.observation.prompt.version"]
        for s in spans
        if s["attributes"].get("langfuse.observation.type") == "generation"
    }
    assert len(session_of) == 40 and set(version_of) == set(session_of)
    served: dict[str, set[int]] = {}
    for trace_id, session in session_of.items():
        served.setdefault(str(session), set()).add(version_of[trace_id])
    assert len(served) == 20 and all(len(v) == 1 for v in served.values())  # sticky: one version per session
    expected = {s: {2 if canary_label(s, 0.5, salt="digest") == "canary" else 1} for s in served}
    assert served == expected  # the helper's split, each trace linked to the version its label holds
    canary = sum(v == {2} for v in served.values())
    assert 0 < canary < 20
    assert f"{canary} of 20 sessions on canary" in done.stdout
