"""The guide's complete evaluator suite: each judge's rubric and keys, the deterministic format twin, the gates."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.catalog.config_models import ProjectConfig
from scoregate.catalog.evaluators import EvaluatorSpec
from scoregate.providers.base import Completion, CompletionRequest
from scoregate.scoring.base import EvalContext
from scoregate.scoring.counters import CountersEvaluator
from scoregate.scoring.judge import LlmJudge
from scoregate.scoring.kinds.counters import CountersSpec
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec
from scoregate.store.records import Score
from scoregate.tracks.registry import build_evaluator, evaluator_kinds
from support.projects import CliResult, Runs
from support.scripted_openai import JUDGE_SYSTEM_MARK, ScriptedOpenAI

REPO = Path(__file__).resolve().parents[2]
EVALUATORS = REPO / "evaluators"
SINGLE_SUMMARY_SUITE = [
    "counters_v1",
    "format_checks_v1",
    "ev_actionability_v1",
    "ev_faithfulness_v1",
    "ev_conciseness_v1",
    "ev_format_adherence_v1",
    "ev_format_score_v1",
    "ev_category_match_v1",
    "ev_coverage_v1",
]

GUIDE_KEYS: dict[str, list[tuple[str, str]]] = {
    "counters_v1": [
        ("word_count", "numeric"),
        ("compression_ratio", "numeric"),
        ("references_count", "numeric"),
        ("tools_count", "numeric"),
        ("tldr_within_cap", "boolean"),
        ("required_sections_present", "boolean"),
        ("missing_sections_det", "text"),
    ],
    "format_checks_v1": [("format_adherence_det", "boolean")],
    "ev_actionability_v1": [("actionability_score", "numeric"), ("actionability_notes", "text")],
    "ev_faithfulness_v1": [
        ("faithfulness_score", "numeric"),
        ("hallucination_count", "numeric"),
        ("hallucination_examples", "text"),
    ],
    "ev_conciseness_v1": [("conciseness_score", "numeric"), ("redundancy_notes", "text")],
    "ev_format_adherence_v1": [("format_adherence", "boolean"), ("missing_sections", "text")],
    "ev_format_score_v1": [("format_score", "numeric")],
    "ev_category_match_v1": [("category_match", "boolean"), ("predicted_category", "categorical")],
    "ev_coverage_v1": [("coverage_score", "numeric"), ("missed_topics", "text")],
    "ev_preference_v1": [
        ("preference_winner", "categorical"),
        ("preference_strength", "numeric"),
        ("preference_reason", "text"),
    ],
}
"""Appendix C/E of the guide: the exact keys users put on their dashboards, per evaluator file."""

STYLE_CRITERIA: dict[str, tuple[str, str]] = {
    "ev_actionability_v1": ("where to read more", "tools, commands"),
    "ev_format_adherence_v1": ("3) Where to Read More (links)", "2) Step-by-step (bulleted or numbered steps"),
    "ev_format_score_v1": ("Key Topics (one bullet per topic)", "Step-by-step (numbered or bulleted steps"),
    "ev_category_match_v1": ("a topical digest", "step-by-step instructions"),
    "ev_coverage_v1": ("the main topics or stories", "the major phases or steps"),
    "ev_preference_v1": ("a quick, useful digest", "steps a reader could follow"),
}
"""Per judge that reads the style: a phrase of its catch-up criterion and one of its how-to criterion."""

INPUTS = {
    "transcript": "TRANSCRIPT-7f3a",
    "desired_style": "howto",
    "max_words_tldr": 60,
    "summary_a": "SUMMARY-A-51c2",
    "summary_b": "SUMMARY-B-9d0e",
}
OUTPUT = "SUMMARY-OUT-4e81"


def load(name: str) -> EvaluatorSpec:
    raw = yaml.safe_load((EVALUATORS / f"{name}.yaml").read_text(encoding="utf-8"))
    return evaluator_kinds().parse(raw)


def judge(name: str, **changes: Any) -> LlmJudge:
    spec = load(name)
    assert isinstance(spec, LlmJudgeSpec)
    return LlmJudge(spec.model_copy(update=changes), "judge-model")


class Replies:
    """A judge model answering from a list of replies, in order."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)

    async def __call__(self, model: str | None, request: CompletionRequest, purpose: str) -> Completion:
        return Completion(text=self.replies.pop(0), tokens_in=50, tokens_out=10)


def ask(
    evaluator: LlmJudge | CountersEvaluator, model: Replies, *, output: Any = OUTPUT, **inputs: Any
) -> dict[str, Score]:
    ctx = EvalContext("item-1", {**INPUTS, **inputs}, output, None, {}, model)
    return {s.name: s for s in asyncio.run(evaluator.evaluate(ctx))}


def answer(reasoning: str = "Fine.", **fields: Any) -> str:
    return json.dumps({"reasoning": reasoning, **fields})


# ------------------------------------------------------------------ the files


def test_every_evaluator_of_the_guide_is_a_file_with_its_exact_keys() -> None:
    found = {}
    for name in GUIDE_KEYS:
        spec = load(name)
        assert spec.name == name
        found[name] = [(k, t) for k, t in build_evaluator(spec, default_judge_model=None).score_keys()]
    assert found == GUIDE_KEYS


@pytest.mark.parametrize("name", sorted(n for n in GUIDE_KEYS if n.startswith("ev_")))
def test_judges_answer_a_json_schema_at_low_temperature_on_the_judge_model(name: str) -> None:
    evaluator = judge(name)
    request = evaluator.request(EvalContext("i", INPUTS, OUTPUT, None, {}, Replies()))
    assert request.json_schema is not None
    assert request.json_schema["required"] == list(request.json_schema["properties"])
    assert request.json_schema["additionalProperties"] is False
    assert request.temperature is not None and 0 <= request.temperature <= 0.2
    assert evaluator.model == "judge-model"  # no model pinned in the file: the project's judge_model
    assert judge(name, model="gpt-4o-mini").model == "gpt-4o-mini"


@pytest.mark.parametrize("name", sorted(STYLE_CRITERIA))
def test_rendered_prompt_holds_its_variables_and_both_styles_criteria(name: str) -> None:
    evaluator = judge(name)
    prompt = evaluator.render_prompt(EvalContext("i", INPUTS, OUTPUT, None, {}, Replies()))
    assert "{{" not in prompt
    for var, path in evaluator.spec.variables.items():
        shown = OUTPUT if path == "output" else str(INPUTS[path.removeprefix("input.")])
        assert shown in prompt, var
    assert "Requested style: howto" in prompt
    catchup, howto = STYLE_CRITERIA[name]
    assert catchup.lower() in prompt.lower() and howto.lower() in prompt.lower()
    for anchor in ("1 =", "3 =", "5 =") if evaluator.spec.score.range == (1, 5) else ():
        assert anchor in prompt


def test_preference_judge_sees_both_summaries_and_constrains_winner_and_strength() -> None:
    evaluator = judge("ev_preference_v1")
    props = evaluator.schema["properties"]
    assert list(props) == ["reasoning", "preference_winner", "preference_strength"]
    assert props["preference_winner"] == {"type": "string", "enum": ["A", "B"]}
    assert props["preference_strength"] == {"type": "integer", "enum": [1, 2, 3]}
    prompt = evaluator.render_prompt(EvalContext("i", INPUTS, OUTPUT, None, {}, Replies()))
    assert prompt.index("SUMMARY-A-51c2") < prompt.index("SUMMARY-B-9d0e")
    assert OUTPUT not in prompt  # a pairwise judge reads the two summaries, not a run's single output


# ------------------------------------------------------------------ scripted replies: value or null with reason


@pytest.mark.parametrize(
    ("name", "reply", "expected"),
    [
        (
            "ev_format_adherence_v1",
            answer("Pitfalls/Notes", format_adherence=0),
            {"format_adherence": 0, "missing_sections": "Pitfalls/Notes"},
        ),
        ("ev_format_adherence_v1", answer("none", format_adherence=True), {"format_adherence": 1}),
        ("ev_format_score_v1", answer("Clean headers.", format_score=4), {"format_score": 4}),
        (
            "ev_category_match_v1",
            answer("Reads as a digest.", category_match=0, predicted_category="Catchup"),
            {"category_match": 0, "predicted_category": "catchup"},
        ),
        (
            "ev_coverage_v1",
            answer("The rollback step.", coverage_score=3),
            {"coverage_score": 3, "missed_topics": "The rollback step."},
        ),
        (
            "ev_preference_v1",
            answer("B skips the rollback step.", preference_winner="a", preference_strength=2),
            {"preference_winner": "A", "preference_strength": 2, "preference_reason": "B skips the rollback step."},
        ),
    ],
)
def test_a_valid_reply_is_measured(name: str, reply: str, expected: dict[str, Any]) -> None:
    got = ask(judge(name), Replies(reply))
    assert {k: got[k].value for k in expected} == expected
    assert all(got[k].reason is None for k in expected)


@pytest.mark.parametrize(
    ("name", "reply", "key", "reason"),
    [
        ("ev_format_adherence_v1", answer(format_adherence=2), "format_adherence", "judge replied 2, not 0 or 1"),
        (
            "ev_format_adherence_v1",
            answer(format_adherence="yes"),
            "format_adherence",
            'judge replied "yes", not 0 or 1',
        ),
        ("ev_format_score_v1", answer(format_score=6), "format_score", "judge replied 6, outside 1-5"),
        (
            "ev_format_score_v1",
            answer(format_score=3.5),
            "format_score",
            "judge replied 3.5, not a whole number in 1-5",
        ),
        (
            "ev_category_match_v1",
            answer(category_match=1, predicted_category="essay"),
            "predicted_category",
            'judge replied "essay", not one of catchup, howto, neither',
        ),
        ("ev_coverage_v1", answer(coverage_score=0), "coverage_score", "judge replied 0, outside 1-5"),
        (
            "ev_preference_v1",
            answer(preference_winner="tie", preference_strength=1),
            "preference_winner",
            'judge replied "tie", not one of A, B',
        ),
        (
            "ev_preference_v1",
            answer(preference_winner=1, preference_strength=1),  # the guide's old 0/1 answer is not accepted
            "preference_winner",
            "judge replied 1, not one of A, B",
        ),
        (
            "ev_preference_v1",
            answer(preference_winner="B", preference_strength=4),
            "preference_strength",
            "judge replied 4, outside 1-3",
        ),
        ("ev_coverage_v1", "Coverage is decent, I'd say 4/5.", "coverage_score", "judge reply is not JSON"),
    ],
)
def test_a_reply_out_of_range_or_unparsable_is_null_with_its_reason_never_zero(
    name: str, reply: str, key: str, reason: str
) -> None:
    got = ask(judge(name), Replies(reply))
    assert got[key].value is None
    assert (got[key].reason or "").startswith(reason)


def test_preference_samples_take_the_majority_and_a_split_is_null() -> None:
    three = ask(
        judge("ev_preference_v1", samples=3),
        Replies(
            answer("a1", preference_winner="A", preference_strength=1),
            answer("b", preference_winner="B", preference_strength=3),
            answer("a2", preference_winner="A", preference_strength=2),
        ),
    )
    assert (three["preference_winner"].value, three["preference_strength"].value) == ("A", 2)
    assert three["preference_strength"].spread == 2
    two = ask(
        judge("ev_preference_v1", samples=2),
        Replies(
            answer(preference_winner="A", preference_strength=1),
            answer(preference_winner="B", preference_strength=1),
        ),
    )
    assert two["preference_winner"].value is None
    assert two["preference_winner"].reason == "judge samples tie on preference_winner: 'A' and 'B'"


# ------------------------------------------------------------------ the deterministic twin

CATCHUP_OK = """\
## TL;DR
Corvane relicensed Tern 7B and ReasonBench scores may reflect contamination.

## Key Topics
- Tern 1.2 bans commercial use above one million users.
- 14 percent of ReasonBench questions leaked.

## Where to Read More
- https://corvane.example.com/blog/tern-license

## References & Tools
- Tern 7B
- ReasonBench
"""

HOWTO_OK = """\
**TL;DR:** Add Ruff to pre-commit in ten minutes.

**Step-by-step instructions**
1. Run `pip install pre-commit`.
2. Add the ruff hook to `.pre-commit-config.yaml`.

**Pitfalls & Notes**
- Pin the hook's rev.

**References and Tools:** Ruff, pre-commit
"""

HOWTO_NO_PITFALLS = HOWTO_OK.replace("**Pitfalls & Notes**\n- Pin the hook's rev.\n\n", "")


def twin_and_counters(output: str, **inputs: Any) -> dict[str, Score]:
    """The scores of format_checks_v1 and counters_v1 on one output."""
    scores: dict[str, Score] = {}
    for name in ("format_checks_v1", "counters_v1"):
        spec = load(name)
        assert isinstance(spec, CountersSpec)
        scores |= ask(CountersEvaluator(spec), Replies(), output=output, **inputs)
    return scores


@pytest.mark.parametrize(
    ("output", "style", "adherent", "missing"),
    [
        (CATCHUP_OK, "catchup", 1, ""),
        (HOWTO_OK, "howto", 1, ""),
        (HOWTO_NO_PITFALLS, "howto", 0, "Pitfalls/Notes"),
        (CATCHUP_OK, "howto", 0, "Step-by-step, Pitfalls/Notes"),
        (HOWTO_OK, "catchup", 0, "Key Topics, Where to Read More"),
    ],
)
def test_twin_checks_the_sections_of_the_items_style(output: str, style: str, adherent: int, missing: str) -> None:
    got = twin_and_counters(output, desired_style=style)
    assert got["format_adherence_det"].value == adherent
    assert got["format_adherence_det"].evaluator == "format_checks_v1"
    # the twin agrees with counters_v1's section counters on every item
    assert got["required_sections_present"].value == adherent
    assert got["missing_sections_det"].value == missing


def test_twin_without_a_style_is_null_with_the_reason() -> None:
    got = twin_and_counters(CATCHUP_OK, desired_style=None)
    assert got["format_adherence_det"].value is None
    assert got["format_adherence_det"].reason == (
        "style missing at input.desired_style has no required sections (known: catchup, howto)"
    )


def test_twin_tldr_cap_is_measured_per_item() -> None:
    # the catch-up TL;DR above has 10 words
    assert twin_and_counters(CATCHUP_OK, desired_style="catchup", max_words_tldr=10)["tldr_within_cap"].value == 1
    assert twin_and_counters(CATCHUP_OK, desired_style="catchup", max_words_tldr=9)["tldr_within_cap"].value == 0


# ------------------------------------------------------------------ the shipped gates


def shipped_config() -> ProjectConfig:
    return ProjectConfig.model_validate(yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8")))


def test_shipped_gates_are_the_guides() -> None:
    gates = {g.name: (g.metric, g.stat, g.op, g.threshold, g.datasets) for g in shipped_config().gates}
    assert gates["format_adherence"] == ("format_adherence_det", "mean", ">=", 0.9, None)
    assert gates["tldr_caps_met"] == ("tldr_within_cap", "every_item", ">=", 1, None)
    assert gates["faithfulness"] == ("faithfulness_score", "mean", ">=", 4.2, None)
    assert gates["hallucinations_per_summary"] == ("hallucination_count", "every_item", "<=", 1, None)
    assert gates["conciseness"] == ("conciseness_score", "mean", ">=", 4.0, None)
    assert gates["quality_catchup"][:4] == ("WeightedQuality", "mean", ">=", 4.0)
    assert "catchup_v1" in (gates["quality_catchup"][4] or [])
    assert gates["quality_howto"] == ("WeightedQuality", "mean", ">=", 4.1, ["howto_v1"])


def test_shipped_experiments_run_the_suite_and_every_gate(scoregate: Callable[..., CliResult]) -> None:
    config = shipped_config()
    guide_gates = {"format_adherence", "tldr_caps_met", "faithfulness", "hallucinations_per_summary", "conciseness"}
    for name in ("smoke", "catchup", "howto"):
        assert guide_gates <= set(config.experiments[name].gates), name
    for name in ("catchup", "howto", "gold"):
        assert config.experiments[name].evaluators == SINGLE_SUMMARY_SUITE, name
    result = scoregate("validate", project=REPO)
    assert result.code == 0, result.output
    for name in ("smoke", "catchup", "howto", "gold"):
        assert re.search(rf"experiment {name}: \d+ items, prompts ok, gates ok", result.output), name


def test_format_gate_needs_no_judge_and_bad_judge_replies_lower_coverage(
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
    runs: Runs,
) -> None:
    def add_suite(config: dict[str, Any]) -> None:
        smoke = config["experiments"]["smoke"]
        config["experiments"]["suite"] = {
            **smoke,
            "evaluators": SINGLE_SUMMARY_SUITE,
            "gates": ["format_adherence", "tldr_caps_met", "faithfulness"],
        }

    edit_yaml(project_dir / "scoregate.yaml", add_suite)

    def responder(body: dict[str, Any]) -> str:
        text = "\n".join(str(m["content"]) for m in body["messages"])
        reply = scripted_server.default_reply(body)
        if "Open Models Weekly" not in text:
            return reply
        if JUDGE_SYSTEM_MARK not in text:  # smoke-001's summary loses a section and runs over its 40-word TL;DR
            return reply.replace("## Where to Read More", "## Further links").replace(
                "## TL;DR\n", "## TL;DR\n" + "padding " * 45
            )
        if "Grade the COVERAGE" in text:
            return answer("Misses nothing.", coverage_score=9)
        if "CATEGORY MATCH" in text:
            return answer("A digest.", category_match=1, predicted_category="essay")
        return reply  # the format judge still says 1: the gate does not listen to it

    scripted_server.responder = responder
    result = scoregate("run", "suite", "--no-mlflow")

    assert result.code == 0, result.output
    summary = runs.summary()
    gates = {g["name"]: g for g in summary["gates"]}
    assert gates["format_adherence"]["status"] == "fail"
    assert gates["format_adherence"]["observed"] == pytest.approx(5 / 6)
    assert summary["scores"]["format_adherence"]["mean"] == 1.0
    tldr = gates["tldr_caps_met"]
    assert (tldr["status"], tldr["detail"]) == ("fail", f"1 of 6 items break >= 1: {tldr['failing_items'][0]}")
    assert len(tldr["failing_items"]) == 1
    assert gates["faithfulness"]["status"] == "pass"
    coverage = summary["scores"]["coverage_score"]
    assert (coverage["coverage"], coverage["mean"]) == (pytest.approx(5 / 6), 5.0)
    assert coverage["null_reasons"] == {"judge replied 9, outside 1-5": 1}
    predicted = summary["scores"]["predicted_category"]
    assert predicted["categories"] == {"catchup": 5}
    assert predicted["null_reasons"] == {'judge replied "essay", not one of catchup, howto, neither': 1}
    assert (predicted["n_measured"], predicted["coverage"]) == (5, pytest.approx(5 / 6))
    first = {s["name"]: s for s in next(r for r in runs.results() if r["item_id"] == "smoke-001")["scores"]}
    assert first["missing_sections_det"]["value"] == "Where to Read More"
    assert first["format_adherence_det"]["value"] == 0
