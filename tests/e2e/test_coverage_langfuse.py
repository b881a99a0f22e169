"""`scoregate coverage DATASET`: the share of production traffic (from the reference app) the dataset covers, and the
uncovered traffic in clusters with a count and one redacted example — in the terminal, as JSON and as HTML."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import langfuse_env_fixture  # noqa: F401
from support.production_traffic import LIVE_PROMPT, add_live_experiment, publish_prompt, send_traffic
from support.projects import CliResult
from support.scripted_openai import ScriptedOpenAI

PROMPT = LIVE_PROMPT  # the prompt of the `live` experiment
EMAIL = "li.wei@example.net"
EditYaml = Callable[[Path, Callable[[Any], None]], None]


@pytest.fixture
def traffic(
    langfuse_env: FakeLangfuse, scripted_server: ScriptedOpenAI, project_dir: Path, edit_yaml: EditYaml
) -> None:
    """Two requests like dataset items, two alike about refunds, one about a password (with an email), one unmapped."""
    edit_yaml(project_dir / "scoregate.yaml", add_live_experiment)
    publish_prompt(langfuse_env, name=PROMPT, labels=["production"])
    lines = (project_dir / "datasets" / "smoke_v1.jsonl").read_text().splitlines()
    known = [json.loads(line)["input"] for line in lines[:2]]
    inputs = [
        {"title": known[0]["title"], "transcript": known[0]["transcript"]},
        {"title": known[1]["title"], "transcript": known[1]["transcript"]},
        {"title": "Refund request", "transcript": "Caller: I want a refund for order 1 of the blue kettle."},
        {"title": "Refund request", "transcript": "Caller: I want a refund for order 2 of the blue kettle."},
        {"title": "Password </script>", "transcript": f"Caller: reset my password, mail me at {EMAIL} please."},
        {"title": "Nothing else"},
    ]
    send_traffic(langfuse_env, scripted_server, inputs, prompt=PROMPT)


def test_coverage_counts_the_covered_share_and_clusters_the_rest(
    scoregate: Callable[..., CliResult], project_dir: Path, traffic: None
) -> None:
    result = scoregate("coverage", "smoke_v1")

    assert result.code == 0, result.err
    assert "2 of 5 traces covered (40.0%): an item at similarity 90 or more among 6 items; 1 skipped" in result.out
    assert "uncovered: 3 traces in 2 clusters" in result.out
    assert "2 traces, e.g." in result.out and "1 trace, e.g." in result.out
    assert "[EMAIL]" in result.out and EMAIL not in result.out


def test_coverage_as_json_and_html_says_the_same_redacted(
    scoregate: Callable[..., CliResult], project_dir: Path, tmp_path: Path, traffic: None
) -> None:
    page = tmp_path / "coverage.html"
    as_json = scoregate("coverage", "smoke_v1", "--json", "--html", str(page))

    assert as_json.code == 0, as_json.err
    data = json.loads(as_json.out)
    assert (data["traces"], data["covered"], data["share"]) == (5, 2, 0.4)
    assert [c["count"] for c in data["clusters"]] == [2, 1]
    text = page.read_text()
    assert "2 of 5 traces covered (40.0%)" in text
    assert "&lt;/script&gt;" in text and "</script>" not in text  # the trace's text is escaped, the page has none
    assert EMAIL not in text + as_json.out


def test_a_lower_threshold_covers_more(scoregate: Callable[..., CliResult], traffic: None) -> None:
    strict, loose = (
        scoregate("coverage", "smoke_v1", "--json"),
        scoregate("coverage", "smoke_v1", "--json", "--threshold", "1"),
    )
    assert json.loads(loose.out)["covered"] == 5 > json.loads(strict.out)["covered"]
