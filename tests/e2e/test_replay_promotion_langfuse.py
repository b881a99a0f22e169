"""The production loop's last step on the Langfuse double with the reference app: a `promotion:` rule with
`replay: {min_items, not_worse}` refuses `promote` until a replay of the candidate version exists, then promotes with
the replay as evidence."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import langfuse_env_fixture  # noqa: F401
from support.production_traffic import LIVE_PROMPT, add_live_experiment, publish_prompt, send_traffic
from support.projects import CliResult
from support.scripted_openai import ScriptedOpenAI

PROMPT = LIVE_PROMPT  # the prompt of the `live` experiment
EditYaml = Callable[[Path, Callable[[Any], None]], None]


def _configure(min_items: int) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        data["gates"].append({"name": "answers", "metric": "word_count", "op": ">", "threshold": 0})
        add_live_experiment(data)
        data["experiments"]["live"]["gates"] = ["answers"]
        data["promotion"] = {PROMPT: {"experiments": ["live"], "replay": {"min_items": min_items, "not_worse": True}}}

    return change


def _holder(fake: FakeLangfuse) -> int | None:
    found = [v["version"] for v in fake.state.prompts[PROMPT] if "production" in v["labels"]]
    return found[0] if found else None


def _loop(
    langfuse_env: FakeLangfuse, scripted_server: ScriptedOpenAI, project_dir: Path, edit_yaml: EditYaml, items: int
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", _configure(items))
    publish_prompt(langfuse_env, name=PROMPT, labels=["production", "candidate"])  # v1 serves, v2 is the candidate
    inputs = [{"title": f"Episode {i}", "transcript": f"Host: topic {i} took {i + 2} weeks."} for i in range(3)]
    send_traffic(langfuse_env, scripted_server, inputs, prompt=PROMPT)


def test_promote_is_refused_without_a_replay_then_promotes_with_the_replay_as_evidence(
    scoregate: Callable[..., CliResult],
    langfuse_env: FakeLangfuse,
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: EditYaml,
) -> None:
    _loop(langfuse_env, scripted_server, project_dir, edit_yaml, 3)
    assert scoregate("validate").code == 0
    ran = scoregate("run", "live", "--prompt-version", "2")
    assert ran.code == 0, ran.err

    refused = scoregate("promote", PROMPT, "--version", "2")

    assert refused.code == 3, refused.output
    assert "replay of live: no replay of summarization-catchup v2" in refused.output
    assert "scoregate replay live --production 3 --prompt-version 2" in refused.output
    assert _holder(langfuse_env) == 1

    replayed = scoregate("replay", "live", "--production", "3", "--prompt-version", "2")
    assert replayed.code == 0, replayed.err
    assert "verdict: not worse" in replayed.out

    promoted = scoregate("promote", PROMPT, "--version", "2")

    assert promoted.code == 0, promoted.output
    assert "replay of live" in promoted.output
    assert _holder(langfuse_env) == 2


def test_a_replay_of_fewer_items_than_the_rule_asks_is_no_evidence(
    scoregate: Callable[..., CliResult],
    langfuse_env: FakeLangfuse,
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: EditYaml,
) -> None:
    _loop(langfuse_env, scripted_server, project_dir, edit_yaml, 10)
    assert scoregate("run", "live", "--prompt-version", "2").code == 0
    assert scoregate("replay", "live", "--production", "3", "--prompt-version", "2").code == 0

    refused = scoregate("promote", PROMPT, "--version", "2")

    assert refused.code == 3, refused.output
    assert "replayed 3 items, the rule asks for at least 10" in refused.output
    assert _holder(langfuse_env) == 1
