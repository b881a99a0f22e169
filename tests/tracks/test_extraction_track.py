"""The extraction track end to end: shipped dataset, prompt and evaluator through the engine and a scripted server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.catalog.datasets import iter_items
from scoregate.catalog.models import DatasetItem, PromptSpec
from scoregate.catalog.plan import plan_experiment
from scoregate.engine.item import ItemPipeline
from scoregate.errors import ScoregateError
from scoregate.scoring.base import EvalContext
from scoregate.store.records import CallRecord, ItemResult
from scoregate.tracks.extraction import check_items, level_gates, production_levels, recommend, summary_recommendation
from scoregate.tracks.extraction.decision import LEVEL_ORDER
from scoregate.tracks.extraction.kind import ExtractionEvaluator
from scoregate.tracks.extraction.metrics import METRIC_KEYS, schema_complexity
from scoregate.tracks.extraction.run_summary import aggregate_results, extraction_run_summary
from scoregate.tracks.extraction.spec import ExtractionSpec
from scoregate.tracks.project import load_project
from scoregate.tracks.registry import build_evaluator
from support.projects import copy_shipped, write_yaml
from support.scripted_openai import ScriptedOpenAI

REPO = Path(__file__).resolve().parents[2]
DATASET = REPO / "datasets" / "extraction_v1.jsonl"
ITEMS = {item.id: item for _, item in iter_items(DATASET)}


def leaves(value: Any) -> int:
    """Fields of a reference as the metrics count them: objects are walked into, arrays and scalars are leaves."""
    if value is None:
        return 0
    if isinstance(value, dict):
        return sum(leaves(v) for v in value.values())
    return 1


def perturbed_reply(item: DatasetItem) -> str:
    """The scripted model's answer: the reference, except five items that go wrong in known ways."""
    expected = json.loads(json.dumps(item.expected_output))
    if item.id == "inv-002":
        return '{"invoice_number": "2024/883", "total": '  # cut off: not JSON
    if item.id == "job-003":
        expected["work_mode"] = "anywhere"  # not in the enum: schema-invalid
    if item.id == "tic-001":
        expected["customer_mood"] = "angry"  # a fabricated extra field (the schema allows extra keys)
    if item.id == "re-001":
        del expected["features"]  # an optional field left out
    return json.dumps(expected)


@pytest.fixture
def extraction_project(
    tmp_path: Path, scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A project with the shipped extraction files whose model is the scripted server (replies: perturbed_reply)."""
    root = tmp_path / "project"
    copy_shipped(
        root,
        {
            "datasets": ["extraction_v1.jsonl", "extraction_v1.yaml"],
            "prompts": ["extraction.yaml"],
            "evaluators": ["extraction_v1.yaml"],
        },
    )
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))
    config = {
        "project": "extraction-test",
        "settings": {"model": "scripted", "concurrency": 4, "bootstrap_resamples": 200},
        "models": {"scripted": {"provider": "openai", "model": "scripted-1", "base_url": scripted_server.url}},
        "gates": [g for g in shipped["gates"] if g["name"].startswith("extraction_")],
        "experiments": {"extraction": shipped["experiments"]["extraction"]},
    }
    write_yaml(root / "scoregate.yaml", config)
    by_text = {item.input["text"]: item for item in ITEMS.values()}

    def reply(body: dict[str, Any]) -> str:
        user = body["messages"][-1]["content"]
        text = user.split("Text:\n", 1)[1].split("\n\nExtract information", 1)[0]
        return perturbed_reply(by_text[text])

    scripted_server.responder = reply
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    yield root


def test_a_run_sends_each_items_schema_and_scores_every_metric_or_says_why_not(
    extraction_project: Path, scripted_server: ScriptedOpenAI
) -> None:
    outcome = run_experiment(
        extraction_project,
        "extraction",
        RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})), use_cache=False),
    )

    requests = scripted_server.task_requests()
    assert len(requests) == len(ITEMS) == 56
    for request in requests:
        fmt = request.body["response_format"]
        text = request.body["messages"][-1]["content"].split("Text:\n", 1)[1].split("\n\nExtract", 1)[0]
        (item,) = [i for i in ITEMS.values() if i.input["text"] == text]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert fmt["json_schema"]["name"] == "extraction_result"
        assert fmt["json_schema"]["schema"] == item.input["schema"]
        assert json.dumps(item.input["schema"], ensure_ascii=False) in request.body["messages"][-1]["content"]

    results = {r.item_id: r for r in outcome.store.iter_results()}
    for result in results.values():
        by_name = {s.name: s for s in result.scores}
        assert list(by_name) == list(METRIC_KEYS)
        for score in by_name.values():
            assert score.value is not None or score.reason, (result.item_id, score)

    def values(item_id: str) -> dict[str, Any]:
        return {s.name: s.value for s in results[item_id].scores}

    # Invalid JSON is a failure that is counted and scores 0 (not null) on every field metric.
    broken = results["inv-002"]
    assert broken.error is not None and broken.raw_output is not None
    assert values("inv-002")["eqs"] == 0.0 and values("inv-002")["parsed"] == 0.0
    assert values("inv-002")["field_f1_partial"] == 0.0 and values("inv-002")["schema_valid"] == 0.0
    invalid = {s.name: s for s in results["job-003"].scores}
    assert invalid["schema_valid"].value == 0.0 and invalid["eqs"].value == 0.0
    assert "'anywhere' is not one of" in (invalid["schema_valid"].comment or "")
    assert invalid["hallucination_rate"].value is None
    assert invalid["hallucination_rate"].reason == "the output does not conform to the schema"
    # 4 expected fields, 5 predicted, 4 exact: F1 = 8/9; hallucination 1/5; EQS = .15 + .5·8/9 + .2 + .15·.8
    assert values("tic-001")["hallucination_rate"] == pytest.approx(0.2)
    assert values("tic-001")["eqs"] == pytest.approx(0.15 + 0.5 * 8 / 9 + 0.2 + 0.15 * 0.8)
    # 12 expected fields, 11 predicted and exact: F1 = 22/23, omission 1/12
    assert values("re-001")["omission_rate"] == pytest.approx(1 / 12)
    assert values("re-001")["eqs"] == pytest.approx(0.15 + 0.5 * 22 / 23 + 0.2 + 0.15)
    perfect = [i for i in ITEMS if i not in {"inv-002", "job-003", "tic-001", "re-001"}]
    assert all(values(i)["eqs"] == 1.0 and values(i)["exact_match"] == 1.0 for i in perfect)

    summary = outcome.summary
    eqs_mean = (52 + 0.15 + 0.5 * 8 / 9 + 0.2 + 0.12 + 0.5 + 0.5 * 22 / 23) / 56
    assert summary["scores"]["eqs"]["mean"] == pytest.approx(eqs_mean)
    gates = {g["name"]: g for g in summary["gates"]}
    assert gates["extraction_minimum_success_rate"]["status"] == "fail"  # 55 of 56 replies usable
    assert gates["extraction_minimum_success_rate"]["observed"] == pytest.approx(55 / 56)
    assert {n for n, g in gates.items() if g["status"] != "pass"} == {"extraction_minimum_success_rate"}
    assert summary["verdict"] == "fail"

    evaluators = [
        build_evaluator(load_project(extraction_project).evaluators["extraction_v1"], default_judge_model=None)
    ]
    report = extraction_run_summary(evaluators, outcome.store, summary, resamples=200)["extraction"]
    assert json.loads(json.dumps(report)) == report  # plain JSON, as summary.json stores it
    m = report["metrics"]
    assert (report["items"], report["scored"], report["unscored_references"]) == (56, 56, [])
    assert m["schema_validity_rate"] == pytest.approx(54 / 56) and m["exact_match_rate"] == pytest.approx(52 / 56)
    assert m["parse_failure_rate"] == pytest.approx(1 / 56) and m["schema_failure_rate"] == pytest.approx(1 / 56)
    total = sum(leaves(i.expected_output) for i in ITEMS.values())
    missed = leaves(ITEMS["inv-002"].expected_output) + leaves(ITEMS["job-003"].expected_output) + 1
    exact = total - missed
    assert report["fields"]["counts"]["missed"] == missed and report["fields"]["counts"]["spurious"] == 1
    assert m["field_precision_strict"] == pytest.approx(exact / (exact + 1))  # micro over every field of the run
    assert m["field_recall_strict"] == pytest.approx(exact / total)
    assert m["hallucination_rate"] == pytest.approx(1 / (exact + 1))
    assert report["fields"]["hallucinations"]["fabricated"] == 1
    assert report["eqs_ci"]["mean"] == pytest.approx(eqs_mean)
    assert report["eqs_ci"]["ci_low"] <= eqs_mean <= report["eqs_ci"]["ci_high"]
    perf = report["performance"]
    assert perf["request_success_rate"] == 1.0 and perf["timeout_rate"] == 0.0
    assert perf["latency_p95_ms"] is not None and perf["tokens_out_total"] > 0
    assert perf["fields_per_output_token"] > 0 and perf["throughput_items_per_s"] > 0
    assert perf["cost_usd_total"] is None and "cost" in perf["null_reasons"]
    bins = report["complexity_analysis"]["bins"]
    assert {b: v["items"] for b, v in bins.items()} == {"complex": 7, "medium": 35, "simple": 14}
    assert report["levels"]["minimum"]["verdict"] == "fail" and report["level_reached"] is None
    assert report["recommendation"]["code"] == "deploy_without_review"


def test_the_shipped_dataset_is_varied_and_every_reference_obeys_its_own_schema() -> None:
    assert len(ITEMS) >= 50 and check_items(ITEMS.values()) == []
    domains = {item.metadata["domain"] for item in ITEMS.values()}
    assert len(domains) >= 6
    bins = {schema_complexity(item.input["schema"]).bin for item in ITEMS.values()}
    assert bins == {"simple", "medium", "complex"}
    declared = [
        t for item in ITEMS.values() for p in item.input["schema"]["properties"].values() for t in [p.get("type")]
    ]
    assert {"string", "integer", "number", "boolean", "array", "object"} <= set(declared)
    assert any("enum" in p for i in ITEMS.values() for p in i.input["schema"]["properties"].values())
    omitted = [i for i in ITEMS.values() if set(i.input["schema"]["properties"]) - set(i.expected_output)]
    assert len(omitted) >= 25  # fields the text does not state are left out of the reference
    assert sum("expected_alternatives" in i.metadata for i in ITEMS.values()) >= 10


def test_the_extraction_experiment_plans_and_its_gates_are_the_specifications_levels() -> None:
    project = load_project(REPO)
    plan = plan_experiment(project, "extraction")
    assert plan.dataset_scan.count == len(ITEMS)
    assert [g.name for g in plan.gates] == [g.name for g in level_gates("minimum")]
    shipped = {g.name: g for g in project.config.gates}
    for level in LEVEL_ORDER:
        for gate in level_gates(level):
            assert shipped[gate.name] == gate


def test_prompt_takes_either_one_schema_or_the_items_own() -> None:
    base = {"name": "p", "type": "text", "prompt": "{{text}}"}
    both = {"name": "x", "schema": {"type": "object"}, "schema_from": "input.schema"}
    for fmt in (both, {"name": "x"}, {"schema_from": "output.schema"}):
        with pytest.raises(ValidationError):
            PromptSpec.model_validate({**base, "config": {"response_format": fmt}})
    prompt = PromptSpec.model_validate({**base, "config": {"response_format": {"schema_from": "input.schema"}}})
    pipeline = ItemPipeline(None, {"p": prompt}, {"p": "1"}, "m", None, [], {})  # type: ignore[arg-type]
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    request = pipeline.request_for(prompt, DatasetItem(id="i1", input={"text": "t", "schema": schema}))
    assert request.json_schema == schema
    with pytest.raises(ScoregateError, match=r"item 'i2' has no JSON Schema object at input\.schema"):
        pipeline.request_for(prompt, DatasetItem(id="i2", input={"text": "t"}))


@pytest.mark.parametrize(
    "bad",
    [
        {"thresholds": {"exact": 0.4, "partial": 0.5}},
        {"eqs_weights": {"schema_validity": 0, "field_f1": 0, "type_accuracy": 0, "no_hallucination": 0}},
        {"schema_source": "output.schema"},
        {"float_epsilon": -1},
        {"case_insensitive": True},
    ],
)
def test_a_bad_extraction_evaluator_file_is_rejected(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ExtractionSpec.model_validate({"kind": "extraction", "name": "e", "version": 1, **bad})


@pytest.mark.parametrize(
    ("eqs", "hallucination", "code"),
    [
        (0.90, 0.0199, "deploy_without_review"),
        (0.90, 0.02, "deploy_with_spot_checks"),
        (0.8999, 0.0, "deploy_with_spot_checks"),
        (0.80, 0.0499, "deploy_with_spot_checks"),
        (0.80, 0.05, "deploy_with_mandatory_review"),
        (0.70, 0.0999, "deploy_with_mandatory_review"),
        (0.70, 0.10, "not_recommended"),
        (0.6999, 0.0, "not_recommended"),
        (None, 0.0, "not_measured"),
    ],
)
def test_recommendation_rule_boundaries(eqs: float | None, hallucination: float, code: str) -> None:
    assert recommend(eqs, hallucination).code == code


def _summary(eqs: float, valid: float, f1: float, hallucination: float, p95: float, success: float) -> dict[str, Any]:
    def stat(mean: float) -> dict[str, Any]:
        return {"mean": mean, "coverage": 1.0}

    return {
        "scores": {
            "eqs": stat(eqs),
            "schema_valid": stat(valid),
            "field_f1_partial": stat(f1),
            "hallucination_rate": stat(hallucination),
        },
        "run_metrics": {"latency_p95_ms": p95, "success_rate": success},
    }


def test_the_level_reached_is_the_highest_whose_levels_below_all_pass() -> None:
    target = production_levels(_summary(0.88, 0.985, 0.85, 0.03, 1500, 0.996))
    assert [target["levels"][lv]["verdict"] for lv in LEVEL_ORDER] == ["pass", "pass", "fail"]
    assert target["level_reached"] == "target"
    # Excellent quality but a slow p95 fails every level: nothing is reached.
    slow = production_levels(_summary(0.95, 1.0, 0.95, 0.0, 6000, 1.0))
    assert slow["level_reached"] is None
    assert summary_recommendation(_summary(0.95, 1.0, 0.95, 0.0, 6000, 1.0)).code == "deploy_without_review"
    missing = production_levels({"scores": {}, "run_metrics": {}})
    assert missing["levels"]["minimum"]["verdict"] == "incomplete"


def test_run_aggregates_count_failed_calls_timeouts_and_unscorable_references() -> None:
    evaluator = ExtractionEvaluator(ExtractionSpec(kind="extraction", name="e", version=1))
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}

    def result(item_id: str, output: Any, call: CallRecord, expected: Any = None) -> ItemResult:
        reference = {"n": 4, "s": "a"} if expected is None else expected
        inputs = {"text": "n is 4, s is a", "schema": schema}
        return ItemResult(0, item_id, "p@1", inputs, output, reference, calls=[call])

    def call(latency: float = 100.0, **kw: Any) -> CallRecord:
        return CallRecord("task", "m", "e", latency_ms=latency, tokens_in=20, tokens_out=5, cost_usd=0.001, **kw)

    results = [
        result("exact", {"n": 4, "s": "a"}, call(100.0)),
        result("half", {"n": 6, "s": "a"}, call(300.0, retries=1)),  # 6 for 4: number score 1 − 2/4, partial
        result("cached", {"n": 4, "s": "a"}, call(0.0, cached=True)),  # no latency: it was not called
        result("timeout", None, CallRecord("task", "m", "e", retries=2, error="timed out calling http://m/v1")),
        result("bad-ref", {"n": 1}, call(200.0), expected={"n": "one"}),
    ]
    report = aggregate_results(evaluator, results, resamples=100, wall_seconds=10.0)

    assert report["not_scored"] == {"model_call_failed": 1, "reference_problem": 1}
    assert report["failed_calls"] == [{"item_id": "timeout", "error": "timed out calling http://m/v1"}]
    (unscored,) = report["unscored_references"]
    assert unscored["item_id"] == "bad-ref" and "$.n: 'one' is not of type 'integer'" in unscored["reason"]
    perf = report["performance"]
    assert perf["latency_mean_ms"] == pytest.approx(200.0)  # 100, 300, 200: the cached call is left out
    assert (perf["timeout_rate"], perf["retry_rate"], perf["request_success_rate"]) == (0.2, 0.4, 0.8)
    assert perf["throughput_items_per_s"] == 0.5 and perf["cost_usd_total"] == pytest.approx(0.004)
    assert perf["fields_per_output_token"] == pytest.approx(6 / 15)  # 3 scored outputs of 2 fields, 5 tokens each
    counts = report["fields"]["counts"]
    assert (counts["exact"], counts["partial"], report["scored"]) == (5, 1, 3)
    assert report["metrics"]["field_precision_partial"] == pytest.approx(5.5 / 6)


@pytest.mark.parametrize(
    ("schema", "expected", "reason"),
    [
        ({"type": "objekt"}, {"a": 1}, "the item's JSON Schema is invalid"),
        ({"type": "object"}, None, "the item has no expected_output to compare with"),
        ({"type": "object", "required": ["a"]}, {"b": 1}, "violates its own schema: $: 'a' is a required property"),
    ],
)
def test_an_item_that_cannot_be_scored_gets_every_score_null_with_the_reason(
    schema: dict[str, Any], expected: Any, reason: str
) -> None:
    evaluator = ExtractionEvaluator(ExtractionSpec(kind="extraction", name="e", version=1))
    item = DatasetItem(id="x", input={"text": "t", "schema": schema}, expected_output=expected)
    ctx = EvalContext("x", item.input, '{"a": 1}', item.expected_output, {}, None)  # type: ignore[arg-type]
    scores = evaluator.score(ctx)
    assert [s.name for s in scores] == list(METRIC_KEYS)
    assert all(s.value is None and reason in (s.reason or "") for s in scores)
