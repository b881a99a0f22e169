"""The production loop on the Langfuse double, end to end with the reference app: traffic → `traces score` (twice:
every score once) → `coverage` → `harvest` (a diff) → `--apply` → `harvest` again (nothing new) → `datasets sync`
→ `coverage` again (the harvested traffic is now covered). Replay and promotion using it:
test_replay_promotion_langfuse.py."""

from __future__ import annotations

import json
from collections import Counter
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


def test_traffic_scored_measured_harvested_applied_and_synced(
    scoregate: Callable[..., CliResult],
    langfuse_env: FakeLangfuse,
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: EditYaml,
) -> None:
    edit_yaml(
        project_dir / "scoregate.yaml",
        lambda data: add_live_experiment(data, evaluators=["ev_faithfulness_v1"], environment="production"),
    )
    publish_prompt(langfuse_env, name=PROMPT, labels=["production"])
    topics = ["a schema migration", "a price change", "an incident review"]
    inputs = [
        {"title": f"Episode {i}", "transcript": f"Host: this week, {t}. Guest: it took {i + 2} days."}
        for i, t in enumerate(topics)
    ]
    send_traffic(langfuse_env, scripted_server, inputs, prompt=PROMPT)

    for _ in range(2):
        scored = scoregate("traces", "score", "live")
        assert scored.code == 0, scored.err
    assert "judged: 0 now, 3 before" in scored.out
    assert set(Counter((s["traceId"], s["name"]) for s in langfuse_env.state.scores).values()) == {1}

    before = json.loads(scoregate("coverage", "smoke_v1", "--json").out)
    assert (before["traces"], before["covered"]) == (3, 0)

    proposed = scoregate("harvest", "smoke_v1")
    assert proposed.code == 0 and proposed.out.count("\n+{") == 3
    assert '"faithfulness_score"' in proposed.out  # provenance: the scores traces score gave
    applied = scoregate("harvest", "smoke_v1", "--apply")
    assert applied.code == 0 and "wrote 3 items" in applied.out
    again = scoregate("harvest", "smoke_v1")
    assert "nothing new to propose" in again.out

    synced = scoregate("datasets", "sync", "smoke_v1")
    assert synced.code == 0, synced.err
    after = json.loads(scoregate("coverage", "smoke_v1", "--json").out)
    assert (after["traces"], after["covered"], after["clusters"]) == (3, 3, [])
