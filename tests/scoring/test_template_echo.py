"""The deterministic format counters fail a template echo (an output that is the prompt's own instructions), and
still pass real summaries, which repeat the prompt's headings and quote the transcript."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from scoregate.catalog.models import PromptRoute, PromptSpec
from scoregate.catalog.routing import choose_prompt
from scoregate.catalog.templates import instruction_lines, render_messages
from scoregate.providers.base import Completion, CompletionRequest
from scoregate.scoring.base import EvalContext
from scoregate.scoring.counters import CountersEvaluator
from scoregate.scoring.kinds.counters import CountersSpec
from scoregate.store.records import Score
from support.projects import REPO, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Edit = Callable[[Path, Callable[[Any], None]], None]
ROUTE = PromptRoute.model_validate(
    yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))["experiments"]["smoke"]["prompt"]
)


def prompt(name: str) -> PromptSpec:
    return PromptSpec.model_validate(yaml.safe_load((REPO / "prompts" / f"{name}.yaml").read_text(encoding="utf-8")))


def counters(name: str) -> CountersEvaluator:
    raw = yaml.safe_load((REPO / "evaluators" / f"{name}.yaml").read_text(encoding="utf-8"))
    return CountersEvaluator(CountersSpec.model_validate(raw))


async def _no_model(model: str | None, request: CompletionRequest, purpose: str) -> Completion:
    raise AssertionError("counters must not call a model")


def score(evaluator: CountersEvaluator, output: str, inputs: dict[str, Any], sent: PromptSpec) -> dict[str, Score]:
    """Score `output` as the reply to prompt `sent` for an item with `inputs`, as a run does."""
    context = EvalContext("i", inputs, output, None, {}, _no_model, instruction_lines(sent, inputs))
    return {s.name: s for s in asyncio.run(evaluator.evaluate(context))}


def system_skeleton(body: dict[str, Any]) -> str:
    """The template echo the issue saw: the system message from its first heading on, as sent."""
    system = str(body["messages"][0]["content"])
    return system[system.index("## TL;DR") :]


def instruction_text(sent: PromptSpec, item: dict[str, Any]) -> str:
    """The system message as a run sends it for `item`."""
    return render_messages(sent, item)[0]["content"]


def test_an_echo_of_the_instructions_fails_the_format_counters_with_the_reason() -> None:
    item = {"title": "Open Models Weekly", "desired_style": "catchup", "max_words_tldr": 80, "transcript": "x " * 500}
    sent = prompt("summarization-catchup")
    body = {"messages": [{"content": instruction_text(sent, item)}]}

    got = score(counters("counters_v1"), system_skeleton(body), item, sent)
    det = score(counters("format_checks_v1"), system_skeleton(body), item, sent)

    assert got["required_sections_present"].value == 0 and got["tldr_within_cap"].value == 0
    assert det["format_adherence_det"].value == 0
    every = "the TL;DR, Key Topics, Where to Read More, References & Tools sections hold the prompt's own instructions"
    for s in (got["required_sections_present"], det["format_adherence_det"], got["missing_sections_det"]):
        assert s.comment is not None and s.comment.startswith(f"template echo: {every}"), s.name
    assert got["tldr_within_cap"].comment == (
        "template echo: the TL;DR section holds the prompt's own instructions "
        "(first: 'One paragraph of at most 80 words: what happened and why it matters.'), not a summary"
    )
    # the measurements that are not format checks stay what they are
    assert got["word_count"].value == len(system_skeleton(body).split())
    assert got["word_count"].comment is None


SMOLLM2_SMOKE_004 = (
    "## TL;DR\nOne paragraph of at most 60 words: what happened and why it matters.\n\n### Key Topics\n"
    "- 3 to 6 bullets, one topic each.\n\n### Where to Read More\n- Each link (URL) said in the transcript, one "
    "per bullet. If there is none, write: - none mentioned\n\n## References & Tools\n- One bullet per tool name, "
    "product or service listed on the episode's title.\n\n# Episode 42: PostgreSQL 17 Released\n"
    "### Episode 42: PostgreSQL 17 Released\n#### 10/31/2025\n## TL;DR\nOne paragraph of at most 60 words: what "
    "happened and why it matters.\n\nHannah Kowalczyk, the headline features.\nGrace Oduya, the headline has a new "
    "title in the episode's title.\nThe release notes are here.\nThis is a postscript with a quote from Grace Oduya."
    "\nIt’s not too late to upgrade now.\nHannah: This is a postscript with a quote from Grace Oduya.\n"
)
"""The start of SmolLM2-135M's real reply to smoke-004 (`scoregate run smoke` on the embedded model): the template,
then text of its own. Before the echo check it scored required_sections_present 1 and tldr_within_cap 1."""


def shipped_item(item_id: str) -> dict[str, Any]:
    lines = (REPO / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines()
    return next(item for item in map(json.loads, lines) if item["id"] == item_id)


def test_a_real_small_model_reply_that_starts_with_the_template_fails_format() -> None:
    item = shipped_item("smoke-004")["input"]
    assert item["desired_style"] == "catchup" and item["max_words_tldr"] == 60

    got = score(counters("counters_v1"), SMOLLM2_SMOKE_004, item, prompt("summarization-catchup"))

    assert got["required_sections_present"].value == 0 and got["tldr_within_cap"].value == 0
    assert got["missing_sections_det"].value == ""  # every heading is there; what is under them is the prompt
    comment = got["missing_sections_det"].comment
    assert comment is not None and "the TL;DR, Key Topics, Where to Read More sections hold" in comment
    assert "(first: 'One paragraph of at most 60 words: what happened and why it matters.')" in comment


def test_gold_summaries_of_both_styles_are_not_echoes() -> None:
    """Human-written summaries of the shipped gold set repeat the prompt's headings, yet copy no instruction."""
    lines = (REPO / "datasets" / "gold_v1.jsonl").read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines if line.strip()]
    assert {choose_prompt(ROUTE, item["input"]) for item in items} == {"summarization-catchup", "summarization-howto"}
    for item in items:
        sent = prompt(choose_prompt(ROUTE, item["input"]))
        got = score(counters("counters_v1"), item["expected_output"], item["input"], sent)
        assert got["required_sections_present"].comment is None, item["id"]
        assert got["required_sections_present"].value == 1, item["id"]


def test_a_summary_that_quotes_the_transcript_and_one_instruction_is_not_an_echo() -> None:
    transcript = (
        "We moved ingestion to Kafka last quarter. The bill went down by half.\n"
        "Use only facts from the transcript, my co-host said, laughing."
    )
    item = {"title": "Kafka", "desired_style": "catchup", "max_words_tldr": 80, "transcript": transcript}
    output = (
        "## TL;DR\nWe moved ingestion to Kafka last quarter. The bill went down by half.\n\n"
        "## Key Topics\n- 3 to 6 bullets, one topic each.\n- Kafka ingestion\n- Cost\n\n"
        "## Where to Read More\n- none mentioned\n\n## References & Tools\n- Kafka\n"
    )

    got = score(counters("counters_v1"), output, item, prompt("summarization-catchup"))

    assert got["required_sections_present"].value == 1 and got["required_sections_present"].comment is None
    assert got["tldr_within_cap"].value == 1


def test_a_run_of_echoed_summaries_fails_its_format_gates_and_a_real_one_passes(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    edit_yaml: Edit,
) -> None:
    def format_checks(config: dict[str, Any]) -> None:
        experiment = config["experiments"]["counters"]
        experiment["evaluators"].append("format_checks_v1")
        experiment["gates"].append("format_adherence")

    edit_yaml(project_dir / "scoregate.yaml", format_checks)
    assert scoregate("run", "counters", "--no-mlflow").code == 0  # scripted_openai.markdown_summary's summaries
    real = runs.latest()
    scripted_server.responder = system_skeleton  # `counters` asks no judge

    echoed = scoregate("run", "counters", "--no-mlflow", "--no-cache", "--fail-on-gates")

    assert echoed.code == 3, echoed.output
    gates = {g["name"]: g["status"] for g in runs.summary()["gates"]}
    assert gates == {"sections_present": "fail", "tldr_caps_met": "fail", "format_adherence": "fail"}
    for result in runs.results():
        scores = {s["name"]: s for s in result["scores"]}
        assert result["output"].startswith("## TL;DR\nOne paragraph of at most")
        for key in ("required_sections_present", "format_adherence_det", "tldr_within_cap"):
            assert scores[key]["value"] == 0 and scores[key]["comment"].startswith("template echo:"), key
    assert {g["name"]: g["status"] for g in runs.summary(real)["gates"]} == dict.fromkeys(gates, "pass")
    shown = scoregate("runs", "show", runs.latest(), "--item", "smoke-001")
    assert "template echo: the TL;DR, Key Topics, Where to Read More, References & Tools sections" in shown.output
