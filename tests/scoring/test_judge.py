"""The generic LLM judge against a scripted judge model, and every shipped evaluator file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.errors import ScoregateError
from scoregate.providers.base import Completion, CompletionRequest
from scoregate.scoring.base import EvalContext, ModelCallFailed
from scoregate.scoring.counters import CountersEvaluator
from scoregate.scoring.judge import NOT_PROVIDED, SAMPLING_TEMPERATURE, LlmJudge
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec
from scoregate.store.records import Score
from scoregate.tracks.registry import build_evaluator, evaluator_kinds

EVALUATORS = Path(__file__).resolve().parents[2] / "evaluators"


class ScriptedJudge:
    """A judge model that answers from a script (text, or an exception to raise) and records each call."""

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str | None, CompletionRequest, str]] = []

    async def __call__(self, model: str | None, request: CompletionRequest, purpose: str) -> Completion:
        self.calls.append((model, request, purpose))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return Completion(text=reply, tokens_in=100, tokens_out=20)


def load_spec(name: str, **changes: Any) -> LlmJudgeSpec:
    raw = yaml.safe_load((EVALUATORS / f"{name}.yaml").read_text())
    return LlmJudgeSpec.model_validate({**raw, **changes})


def judge_item(
    judge: LlmJudge, model: ScriptedJudge, *, output: Any = "SUMMARY-TEXT", **inputs: Any
) -> dict[str, Score]:
    ctx = EvalContext("item-1", inputs, output, None, {}, model)
    return {s.name: s for s in asyncio.run(judge.evaluate(ctx))}


def actionability(model: ScriptedJudge, **inputs: Any) -> dict[str, Score]:
    judge = LlmJudge(load_spec("ev_actionability_v1"), "judge-model")
    defaults = {"transcript": "TRANSCRIPT-TEXT", "desired_style": "howto"}
    return judge_item(judge, model, **{**defaults, **inputs})


def reply(reasoning: str = "Clear ordered steps.", **values: Any) -> str:
    return json.dumps({"reasoning": reasoning, **values})


# ------------------------------------------------------------------ the request


def test_request_renders_variables_and_constrains_the_score() -> None:
    model = ScriptedJudge(reply(actionability_score=4))
    actionability(model)
    name, request, purpose = model.calls[0]
    assert (name, purpose) == ("judge-model", "judge:ev_actionability_v1")
    prompt = request.messages[-1]["content"]
    assert "TRANSCRIPT-TEXT" in prompt and "SUMMARY-TEXT" in prompt and "Requested style: howto" in prompt
    assert "{{" not in prompt
    assert '"actionability_score": integer from 1 to 5' in prompt
    schema = request.json_schema
    assert schema is not None
    assert list(schema["properties"]) == ["reasoning", "actionability_score"]
    assert schema["properties"]["actionability_score"] == {"type": "integer", "enum": [1, 2, 3, 4, 5]}
    assert schema["required"] == ["reasoning", "actionability_score"]
    assert (request.temperature, request.max_tokens) == (0, 200)


def test_missing_variable_renders_as_not_provided() -> None:
    model = ScriptedJudge(reply(conciseness_score=5))
    judge_item(LlmJudge(load_spec("ev_conciseness_v1"), None), model)
    assert f"TL;DR word cap: {NOT_PROVIDED}" in model.calls[0][1].messages[-1]["content"]
    assert model.calls[0][0] is None  # no model anywhere: the engine's judge default applies


def test_judge_model_in_the_file_wins_over_the_default() -> None:
    model = ScriptedJudge(reply(actionability_score=3))
    judge = LlmJudge(load_spec("ev_actionability_v1", model="big-judge"), "judge-model")
    judge_item(judge, model, transcript="t", desired_style="catchup")
    assert model.calls[0][0] == "big-judge"


# ------------------------------------------------------------------ reading replies


def test_valid_reply_scores_and_stores_reasoning() -> None:
    got = actionability(ScriptedJudge(reply("Steps 2-3 lack configs.", actionability_score=3)))
    assert got["actionability_score"].value == 3
    assert got["actionability_score"].comment == "Steps 2-3 lack configs."
    assert got["actionability_notes"].value == "Steps 2-3 lack configs."
    assert got["actionability_notes"].data_type == "text"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (7, "judge replied 7, outside 1-5"),
        (0, "judge replied 0, outside 1-5"),
        (4.5, "judge replied 4.5, not a whole number in 1-5"),
        ("great", 'judge replied "great", not a number'),
        (True, "judge replied true, not a number"),
        (None, "judge replied null for 'actionability_score'"),
    ],
)
def test_invalid_score_is_null_with_reason_never_clamped(value: Any, reason: str) -> None:
    got = actionability(ScriptedJudge(reply(actionability_score=value)))
    assert got["actionability_score"].value is None
    assert got["actionability_score"].reason == reason
    assert got["actionability_notes"].value == "Clear ordered steps."  # the reasoning still counts


def test_non_json_reply_is_null_with_reason() -> None:
    got = actionability(ScriptedJudge("I would rate this summary quite highly."))
    assert got["actionability_score"].value is None
    assert got["actionability_score"].reason == "judge reply is not JSON: 'I would rate this summary quite highly.'"
    assert got["actionability_notes"].value is None


def test_json_inside_prose_or_a_code_fence_is_read() -> None:
    text = 'Sure! ```json\n{"reasoning": "ok", "actionability_score": "5"}\n``` Hope this helps {.'
    assert actionability(ScriptedJudge(text))["actionability_score"].value == 5


def test_bare_integer_counts_for_the_primary_score_only() -> None:
    got = actionability(ScriptedJudge(" 4\n"))
    assert got["actionability_score"].value == 4
    assert got["actionability_notes"].value is None
    assert "only a number" in (got["actionability_notes"].reason or "")
    assert actionability(ScriptedJudge("9"))["actionability_score"].reason == "judge replied 9, outside 1-5"


def test_missing_field_is_null_with_reason() -> None:
    got = actionability(ScriptedJudge('{"reasoning": "fine", "score": 4}'))
    assert got["actionability_score"].value is None
    assert got["actionability_score"].reason == "judge reply has no 'actionability_score' field"


def test_cut_off_reply_says_so() -> None:
    class CutOff(ScriptedJudge):
        async def __call__(self, model: str | None, request: CompletionRequest, purpose: str) -> Completion:
            return Completion(text='{"reasoning": "The steps are', finish_reason="length")

    got = actionability(CutOff())
    assert "cut off at max_tokens" in (got["actionability_score"].reason or "")


def test_failed_call_nulls_every_key_with_the_failure() -> None:
    got = actionability(ScriptedJudge(ModelCallFailed("HTTP 503 after 4 retries")))
    assert [s.value for s in got.values()] == [None, None]
    assert all(s.reason == "judge call failed: HTTP 503 after 4 retries" for s in got.values())


# ------------------------------------------------------------------ extra fields


def test_extra_count_field_is_parsed_and_validated() -> None:
    judge = LlmJudge(load_spec("ev_faithfulness_v1"), "j")
    schema = judge.schema["properties"]
    assert schema["hallucination_count"] == {"type": "integer", "minimum": 0}
    assert list(schema) == ["reasoning", "faithfulness_score", "hallucination_count"]

    got = judge_item(
        judge,
        ScriptedJudge(reply("Invents a 40% figure.", faithfulness_score=3, hallucination_count=1)),
        transcript="t",
    )
    assert (got["faithfulness_score"].value, got["hallucination_count"].value) == (3, 1)
    assert got["hallucination_examples"].value == "Invents a 40% figure."

    bad = judge_item(judge, ScriptedJudge(reply(faithfulness_score=5, hallucination_count=-1)), transcript="t")
    assert bad["faithfulness_score"].value == 5
    assert bad["hallucination_count"].value is None
    assert bad["hallucination_count"].reason == "judge replied -1, not a whole number >= 0"


def test_boolean_and_categorical_fields() -> None:
    spec = LlmJudgeSpec(
        kind="llm_judge",
        name="ev_category_match_v1",
        version=1,
        prompt="Style {{style}}: {{summary}}",
        variables={"style": "input.desired_style", "summary": "output"},
        score={"key": "category_match", "data_type": "boolean"},
        extra=[{"key": "predicted_category", "data_type": "categorical", "categories": ["catchup", "howto"]}],
    )
    judge = LlmJudge(spec, "j")
    assert judge.schema["properties"]["category_match"] == {"type": "integer", "enum": [0, 1]}
    assert judge.schema["properties"]["predicted_category"] == {"type": "string", "enum": ["catchup", "howto"]}
    got = judge_item(judge, ScriptedJudge(reply(category_match=True, predicted_category="HowTo")))
    assert (got["category_match"].value, got["predicted_category"].value) == (1, "howto")
    got = judge_item(judge, ScriptedJudge(reply(category_match=2, predicted_category="essay")))
    assert got["category_match"].reason == "judge replied 2, not 0 or 1"
    assert got["predicted_category"].reason == 'judge replied "essay", not one of catchup, howto'


# ------------------------------------------------------------------ self-consistency


def test_samples_take_the_median_and_record_the_spread() -> None:
    judge = LlmJudge(load_spec("ev_actionability_v1", samples=3), "j")
    model = ScriptedJudge(
        reply("a", actionability_score=3), reply("b", actionability_score=5), reply("c", actionability_score=4)
    )
    got = judge_item(judge, model, transcript="t", desired_style="howto")
    assert len(model.calls) == 3
    assert all(call[1].temperature == SAMPLING_TEMPERATURE for call in model.calls)
    assert got["actionability_score"].value == 4
    assert got["actionability_score"].spread == 2
    assert got["actionability_notes"].value == "c"  # the reasoning of the sample at the median


def test_samples_null_when_fewer_than_half_measured() -> None:
    judge = LlmJudge(load_spec("ev_actionability_v1", samples=3), "j")
    model = ScriptedJudge(reply(actionability_score=4), ModelCallFailed("timeout"), "not json")
    got = judge_item(judge, model, transcript="t", desired_style="howto")
    score = got["actionability_score"]
    assert score.value is None
    assert (score.reason or "").startswith("only 1 of 3 judge samples measured actionability_score")

    model = ScriptedJudge(reply(actionability_score=2), ModelCallFailed("timeout"), reply(actionability_score=5))
    half = judge_item(LlmJudge(load_spec("ev_actionability_v1", samples=2), "j"), model)
    assert half["actionability_score"].value == 2  # 1 of 2 is half: measured


# ------------------------------------------------------------------ bad rubrics


def test_unknown_placeholder_fails_at_load() -> None:
    with pytest.raises(ScoregateError, match="uses \\{\\{episode\\}\\}"):
        LlmJudge(load_spec("ev_actionability_v1", prompt="Rate {{episode}}"), "j")


def test_reserved_or_duplicate_keys_fail_at_load() -> None:
    with pytest.raises(ScoregateError, match="'reasoning'"):
        LlmJudge(load_spec("ev_actionability_v1", reasoning_key="reasoning"), "j")
    with pytest.raises(ScoregateError, match="'actionability_score'"):
        LlmJudge(load_spec("ev_actionability_v1", reasoning_key="actionability_score"), "j")


# ------------------------------------------------------------------ shipped files


@pytest.mark.parametrize("path", sorted(EVALUATORS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_evaluator_loads_and_builds(path: Path) -> None:
    spec = evaluator_kinds().parse(yaml.safe_load(path.read_text()))
    assert spec.name == path.stem
    evaluator = build_evaluator(spec, default_judge_model="judge-model")
    assert (evaluator.name, evaluator.version) == (spec.name, spec.version)
    if spec.kind == "llm_judge":
        assert isinstance(evaluator, LlmJudge) and spec.model is None and spec.temperature == 0
    elif spec.kind == "counters":
        assert isinstance(evaluator, CountersEvaluator)


def test_raw_newline_inside_a_json_string_is_accepted() -> None:
    """llama.cpp's JSON grammar lets a raw newline into a string; the reply is otherwise valid JSON."""
    spec = evaluator_kinds().parse(yaml.safe_load((EVALUATORS / "ev_conciseness_v1.yaml").read_text()))
    judge = LlmJudge(spec, "judge")
    parsed = judge.parse(Completion(text='{ "reasoning": "too long,\nrepeats itself","conciseness_score": 2}'))
    assert parsed["conciseness_score"] == (2, None)
