"""A judge with `cascade:`: a cheap first judge asked k times answers when sure, else the strong judge does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.catalog.yaml_files import load_model
from scoregate.errors import ScoregateError
from scoregate.providers.base import Completion, CompletionRequest
from scoregate.scoring.base import EvalContext
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec, with_threshold
from scoregate.store.records import Score
from scoregate.tracks.registry import build_evaluator, evaluator_kinds

EVALUATORS = Path(__file__).resolve().parents[2] / "evaluators"
CASCADE = {"first_model": "cheap", "samples": 5, "target": 0.8, "delta": 0.1}


class Judges:
    """Two judge models answering from scripts, keyed by model name; records every call."""

    def __init__(self, cheap: list[int], strong: list[int]) -> None:
        self.replies = {"cheap": list(cheap), "strong": list(strong)}
        self.calls: list[tuple[str | None, CompletionRequest]] = []

    async def __call__(self, model: str | None, request: CompletionRequest, purpose: str) -> Completion:
        self.calls.append((model, request))
        score = self.replies[str(model)].pop(0)
        return Completion(text=json.dumps({"reasoning": f"{model} says {score}", "actionability_score": score}))

    def asked(self, model: str) -> int:
        return sum(1 for m, _ in self.calls if m == model)


def raw_spec(**changes: Any) -> dict[str, Any]:
    raw = yaml.safe_load((EVALUATORS / "ev_actionability_v1.yaml").read_text())
    return {**raw, "cascade": CASCADE, **changes}


def spec(**changes: Any) -> LlmJudgeSpec:
    return LlmJudgeSpec.model_validate(raw_spec(**changes))


def score(judge_spec: LlmJudgeSpec, judges: Judges) -> dict[str, Score]:
    judge = build_evaluator(judge_spec, default_judge_model="strong")
    ctx = EvalContext("item-1", {"transcript": "T", "desired_style": "howto"}, "SUMMARY", None, {}, judges)
    return {s.name: s for s in asyncio.run(judge.evaluate(ctx))}


def refusal(data: dict[str, Any], tmp_path: Path) -> list[str]:
    """The lines the project loader prints for an evaluator file holding `data`."""
    path = tmp_path / "ev_actionability_v1.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    spec, problems = load_model(path, evaluator_kinds().adapter)
    assert spec is None
    return [line.replace(str(path), "evaluators/ev_actionability_v1.yaml") for line in problems]


def test_a_sure_first_judge_keeps_its_answer_and_the_strong_judge_is_not_asked() -> None:
    judges = Judges(cheap=[4, 4, 4, 4, 4], strong=[])
    scores = score(with_threshold(spec(), 0.8), judges)
    assert (judges.asked("cheap"), judges.asked("strong")) == (5, 0)
    assert scores["actionability_score"].value == 4
    assert scores["actionability_score_first"].value == 4
    assert scores["actionability_score_first_confidence"].value == 1.0
    assert scores["actionability_score"].comment is not None
    assert scores["actionability_score"].comment.startswith("[kept by the first judge cheap: confidence 1 >= 0.8]")
    # k samples of the first judge are drawn at a sampling temperature, each its own cache entry
    assert {r.extra.get("sample") for _, r in judges.calls} == {0, 1, 2, 3, 4}
    assert all((r.temperature or 0) > 0 for _, r in judges.calls)


def test_an_unsure_first_judge_escalates_to_the_strong_judge() -> None:
    judges = Judges(cheap=[4, 4, 3, 5, 4], strong=[2])
    scores = score(with_threshold(spec(), 0.8), judges)
    assert (judges.asked("cheap"), judges.asked("strong")) == (5, 1)
    assert scores["actionability_score"].value == 2
    assert scores["actionability_score_first"].value == 4
    assert scores["actionability_score_first_confidence"].value == pytest.approx(0.6)
    assert str(scores["actionability_score"].comment).startswith(
        "[escalated: the first judge cheap was unsure, confidence 0.6 < 0.8]"
    )


def test_without_a_threshold_the_strong_judge_scores_and_the_first_still_answers_for_calibration() -> None:
    judges = Judges(cheap=[5, 5, 5, 5, 5], strong=[3])
    scores = score(spec(), judges)
    assert scores["actionability_score"].value == 3
    assert scores["actionability_score_first"].value == 5
    assert str(scores["actionability_score"].comment).startswith("[no cascade threshold for this judge version")


def test_the_cascade_writes_the_keys_its_file_declares() -> None:
    judge_spec = spec()
    judge = build_evaluator(judge_spec, default_judge_model="strong")
    assert [k for k, _ in judge.score_keys()] == judge_spec.score_keys()
    assert judge_spec.score_keys()[-2:] == ["actionability_score_first", "actionability_score_first_confidence"]
    assert judge_spec.models_called("strong") == ["strong", "cheap"]
    assert judge_spec.directions()["actionability_score_first"] == "higher"


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (
            {"target": 1.2},
            "cascade.target: 1.2 is above 1: the target is the share of kept items that agree with humans, e.g. 0.8",
        ),
        (
            {"delta": 0},
            "cascade.delta: 0 would ask for certainty, which no calibration set gives: use e.g. 0.1",
        ),
    ],
)
def test_bad_cascade_settings_are_one_clear_line(change: dict[str, Any], line: str, tmp_path: Path) -> None:
    lines = refusal(raw_spec(cascade={**CASCADE, **change}), tmp_path)
    assert lines == [f"evaluators/ev_actionability_v1.yaml: llm_judge.{line}"]


def test_a_judge_that_is_its_own_cascade_is_refused(tmp_path: Path) -> None:
    lines = refusal(raw_spec(model="cheap"), tmp_path)
    assert lines == [
        "evaluators/ev_actionability_v1.yaml: llm_judge: cascade.first_model: 'cheap' is the judge's own model: "
        "a judge cannot be its own cascade (name a cheaper model, or remove cascade:)"
    ]
    with pytest.raises(ScoregateError) as caught:
        build_evaluator(spec(), default_judge_model="cheap")
    assert caught.value.message == (
        "cascade.first_model: 'cheap' is the run's judge model: a judge cannot be its own cascade"
    )
