"""Langfuse as the real v4.16 server behaves (recorded in shared/data/langfuse-recordings): the fake answers
numbers in JavaScript's form, links experiments to datasets and keeps project ids; scoregate must stay
idempotent and exactly-once against that."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import REPO, CliResult
from fake_langfuse import FakeLangfuse
from test_langfuse_check import langfuse_env_fixture  # noqa: F401

Cli = Callable[..., CliResult]


def writes(fake: FakeLangfuse, since: int = 0) -> list[tuple[str, str]]:
    """Return (method, path) of every request after the first `since` that was not a read."""
    return [(r.method, r.path) for r in fake.requests[since:] if r.method != "GET"]


# ---- item 1: a second sync of every shipped file writes nothing ------------------------------------
def test_fake_returns_numbers_as_the_server_prints_them(scoregate: Cli, langfuse_env: FakeLangfuse) -> None:
    assert scoregate("datasets", "sync", "extraction_v1", project=REPO).code == 0
    stored = [i["expectedOutput"] for i in langfuse_env.state.items.values()]
    totals = [o["total"] for o in stored if isinstance(o, dict) and "total" in o]
    assert 219 in totals and all(not (isinstance(t, float) and t.is_integer()) for t in totals)


def test_second_sync_of_every_shipped_dataset_and_prompt_writes_nothing(
    scoregate: Cli, langfuse_env: FakeLangfuse
) -> None:
    assert scoregate("datasets", "sync", project=REPO).code == 0
    assert scoregate("prompts", "sync", project=REPO).code == 0
    before = len(langfuse_env.requests)
    datasets = scoregate("datasets", "sync", project=REPO)
    prompts = scoregate("prompts", "sync", project=REPO)
    assert datasets.code == 0 and prompts.code == 0, datasets.output + prompts.output
    assert writes(langfuse_env, before) == []
    assert "applied: 0 writes" in datasets.output
    shipped = len(list((REPO / "prompts").glob("*.yaml")))
    assert f"0 versions created, 0 relabelled, {shipped} unchanged" in prompts.output
    assert langfuse_env.validation_failures == []


def test_prompt_with_float_config_is_unchanged_after_the_server_rewrote_it(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    assert "temperature: 0\n" in (project_dir / "prompts" / "extraction.yaml").read_text(encoding="utf-8")
    assert scoregate("prompts", "sync", "extraction").code == 0
    assert langfuse_env.state.prompts["extraction"][0]["config"]["temperature"] == 0
    assert type(langfuse_env.state.prompts["extraction"][0]["config"]["temperature"]) is int
    assert scoregate("prompts", "sync", "extraction").code == 0
    assert [v["version"] for v in langfuse_env.state.prompts["extraction"]] == [1]
