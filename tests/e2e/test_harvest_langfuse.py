"""`scoregate harvest DATASET`: production traces from the reference app proposed as new items — a reviewable diff with
provenance, redacted before anything touches disk, near-duplicates dropped, hostile traces skipped with a reason,
`--apply` writes, the same window again proposes nothing, and `datasets sync` takes the result."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import langfuse_env_fixture  # noqa: F401
from support.production_traffic import LIVE_PROMPT, add_live_experiment, log_trace, publish_prompt, send_traffic
from support.projects import CliResult
from support.scripted_openai import ScriptedOpenAI

PROMPT = LIVE_PROMPT  # the prompt of the `live` experiment
EditYaml = Callable[[Path, Callable[[Any], None]], None]
SECRET = "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
EMAIL = "maria.rossi@example.org"
CARD = "4111 1111 1111 1111"
CUSTOMER = "CUST-77123"
PERSONAL = (SECRET, EMAIL, CARD, CUSTOMER, "4111111111111111")


def _talk(n: int) -> str:
    topics = ["a database migration", "a pricing change", "an outage review", "a hiring plan", "a GPU shortage"]
    return f"Host: today we cover {topics[n]}. Guest {n}: it took {n + 3} weeks and {n * 7 + 2} people."


@pytest.fixture
def traffic(
    langfuse_env: FakeLangfuse,
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: EditYaml,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """Three new requests, one near-duplicate of a dataset item, one of another request, and the hostile ones."""
    monkeypatch.setenv("SUPPORT_DESK_TOKEN", SECRET)
    edit_yaml(project_dir / "scoregate.yaml", lambda data: add_live_experiment(data, redact=[r"CUST-\d+"]))
    publish_prompt(langfuse_env, name=PROMPT, labels=["production"])
    existing = json.loads((project_dir / "datasets" / "smoke_v1.jsonl").read_text().splitlines()[0])["input"]
    inputs = {
        "new-0": {"title": "Episode A", "transcript": _talk(0)},
        "new-1": {"title": "Episode B", "transcript": _talk(1)},
        "new-2": {"title": "Episode C", "transcript": _talk(2)},
        "dup-item": {"title": existing["title"], "transcript": existing["transcript"] + " Thanks."},
        "dup-new": {"title": "Episode A", "transcript": _talk(0) + "!"},
        "personal": {
            "title": "Billing call",
            "transcript": f"Caller: I am {EMAIL}, card {CARD}, account {CUSTOMER}, key {SECRET}. </script>",
        },
        "huge": {"title": "Huge", "transcript": "word " * 220_000},
        "no-field": {"title": "Only a title"},
    }
    ids = {}
    for name, variables in inputs.items():
        ids[name] = send_traffic(langfuse_env, scripted_server, [variables], prompt=PROMPT)[0].trace_id
    surrogate = {"title": "Broken \ud800 text", "transcript": "Host: a lone surrogate came in."}
    ids["surrogate"] = log_trace(langfuse_env, surrogate, "A summary.", prompt=PROMPT)  # no model client sends one
    return ids


def _all_text(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and p.suffix != ".sqlite")


def test_harvest_proposes_a_redacted_diff_with_provenance_then_applies_it_once(
    scoregate: Callable[..., CliResult], project_dir: Path, langfuse_env: FakeLangfuse, traffic: dict[str, str]
) -> None:
    dataset = project_dir / "datasets" / "smoke_v1.jsonl"
    before = dataset.read_text()

    proposed = scoregate("harvest", "smoke_v1", "--strategy", "uncovered")

    assert proposed.code == 0, proposed.err
    assert dataset.read_text() == before  # a diff, nothing written
    assert proposed.out.count("\n+{") == 5  # three new, the personal one redacted, the surrogate one repaired
    assert "+++ b/datasets/smoke_v1.jsonl" in proposed.out
    assert f'"trace_id": "{traffic["new-1"]}"' in proposed.out
    assert sum(line.startswith("+{") and "Episode A" in line for line in proposed.out.splitlines()) == 1
    assert '"prompt": "summarization-catchup@1"' in proposed.out
    assert "expected_output" not in proposed.out
    assert "near-duplicate of a dataset item" in proposed.out and traffic["dup-item"] in proposed.out
    assert "near-duplicate of another proposal" in proposed.out
    assert "over the 100,000 an item may have" in proposed.out
    assert "input.transcript ($.input.transcript)" in proposed.out
    assert "[EMAIL]" in proposed.out and "[CARD]" in proposed.out and "[REDACTED]" in proposed.out
    assert "masked before writing: 1 card, 1 email, 1 pattern" in proposed.out
    for personal in PERSONAL:
        assert personal not in proposed.out + proposed.err

    applied = scoregate("harvest", "smoke_v1", "--strategy", "uncovered", "--apply")

    assert applied.code == 0, applied.err
    assert "wrote 5 items to datasets/smoke_v1.jsonl" in applied.out
    lines = dataset.read_text().splitlines()
    assert len(lines) == len(before.splitlines()) + 5
    assert all("expected_output" not in json.loads(line) for line in lines[-5:])
    assert "\ufffd" in dataset.read_text() and "\ud800" not in dataset.read_text(errors="surrogatepass")
    for personal in PERSONAL:
        assert personal not in _all_text(project_dir)
    assert scoregate("validate").code == 0

    again = scoregate("harvest", "smoke_v1", "--strategy", "uncovered")

    assert again.code == 0, again.err
    assert "0 proposed, 5 already in the dataset" in again.out
    assert "nothing new to propose" in again.out
    assert "+{" not in again.out

    synced = scoregate("datasets", "sync", "smoke_v1")
    assert synced.code == 0, synced.err
    synced = [i for i in langfuse_env.state.items.values() if "production" in (i["metadata"] or {})]
    assert len(synced) == 5
    assert all(i["expectedOutput"] is None for i in synced)


def test_the_strategies_order_by_scores_and_a_stratified_sample(
    scoregate: Callable[..., CliResult], traffic: dict[str, str]
) -> None:
    for strategy in ("lowest", "disagreement", "stratified"):
        result = scoregate("harvest", "smoke_v1", "--strategy", strategy, "--count", "2")
        assert result.code == 0, result.err
        assert result.out.count("\n+{") == 2
        assert f"by strategy {strategy}: 2 proposed" in result.out


def test_an_unknown_strategy_or_dataset_without_production_is_a_clear_error(
    scoregate: Callable[..., CliResult], traffic: dict[str, str]
) -> None:
    wrong = scoregate("harvest", "smoke_v1", "--strategy", "best")
    assert wrong.code != 0 and "unknown strategy 'best'" in wrong.err
    missing = scoregate("harvest", "smoke_v2")
    assert missing.code != 0 and "no dataset 'smoke_v2'" in missing.err
