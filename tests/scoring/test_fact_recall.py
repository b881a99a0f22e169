"""Fact-level recall and the custom metric interface: hand-computed scores, nulls with reasons, full runs."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.catalog.plan import plan_experiment
from scoregate.errors import ScoregateError, ValidationFailed
from scoregate.scoring.base import EvalContext, ModelCallFailed
from scoregate.scoring.custom import CustomEvaluator
from scoregate.scoring.facts import Fact, FactRecallEvaluator, fact_detail, fact_score, read_facts
from scoregate.scoring.kinds.custom import CustomSpec
from scoregate.scoring.kinds.fact_recall import FactRecallSpec
from scoregate.tracks.project import load_project
from support.headless_chromium import Chromium, find_chromium
from support.projects import copy_shipped, write_yaml
from support.scripted_openai import ScriptedOpenAI

REPO = Path(__file__).resolve().parents[2]
NO_RUN = RunOptions(
    selection=RunOptions.Selection(limit=3),
    mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})),
    use_cache=False,
)
FACTS = [
    {"subject": "agent", "predicate": "refunds", "object": "240 dollars", "verdict": "both"},
    {"subject": "agent", "predicate": "sends", "object": "corrected invoice", "verdict": "both"},
    {"subject": "charge", "predicate": "was billed", "object": "twice", "verdict": "both"},
    {"subject": "customer", "predicate": "wants", "object": "an email", "verdict": "expected"},
    {"subject": "customer", "predicate": "is", "object": "happy", "verdict": "got"},
    {"subject": "agent", "predicate": "is called", "object": "Priya", "verdict": "got"},
]


def test_the_fact_score_is_both_over_both_plus_expected_and_the_detail_groups_by_verdict() -> None:
    facts, problem = read_facts(json.dumps({"facts": FACTS}))
    assert problem is None and len(facts) == 6
    assert fact_score(facts) == (75.0, None)  # 3 / (3 + 1); the two `got` facts are not in the denominator
    detail = fact_detail(facts)
    assert detail.splitlines()[0] == "3 of 4 expected facts kept"
    assert "expected only (lost) (1):\n  - customer wants an email" in detail
    assert "got only (added) (2):\n  - customer is happy\n  - agent is called Priya" in detail
    assert fact_score([Fact("a", "b", "c", "got")]) == (None, "the judge found no fact of the expected text")
    assert fact_score([Fact("a", "b", "c", "expected")]) == (0.0, None)
    assert read_facts("I cannot do that")[1] == "judge reply has no facts list: 'I cannot do that'"


def ctx(output: Any, metadata: dict[str, Any], call: Any) -> EvalContext:
    return EvalContext("i1", {}, output, None, metadata, call)


def test_fact_recall_is_null_with_the_reason_without_expected_text_or_a_judge() -> None:
    evaluator = FactRecallEvaluator(
        FactRecallSpec(kind="fact_recall", name="f", version=1, expected_source="metadata.reference"), "judge"
    )

    async def unreachable(*_: Any) -> Any:
        raise ModelCallFailed("judge: connection refused at http://127.0.0.1:9/v1")

    scores = asyncio.run(evaluator.evaluate(ctx("a summary", {}, unreachable)))
    assert [(s.name, s.value, s.reason) for s in scores] == [
        ("fact_recall", None, "no expected text (metadata.reference is empty)"),
        ("fact_recall_facts", None, "no expected text (metadata.reference is empty)"),
    ]
    scores = asyncio.run(evaluator.evaluate(ctx("a summary", {"reference": "The text."}, unreachable)))
    assert scores[0].value is None
    assert scores[0].reason == "judge call failed: judge: connection refused at http://127.0.0.1:9/v1"


CUSTOM_MODULE = """
from scoregate.scoring.custom import CustomMetricResult

async def length_ratio(expected, got):
    return 100.0 * min(len(got), len(expected)) / len(expected), f"{len(got)} of {len(expected)} characters"

async def as_object(expected, got):
    return CustomMetricResult(score=42.0, detail="fixed")

async def broken(expected, got):
    raise RuntimeError("model offline")

async def not_a_number(expected, got):
    return "high", "?"

def not_async(expected, got):
    return 1.0, ""
"""


@pytest.fixture
def custom_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "mymetrics.py").write_text(CUSTOM_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "mymetrics"


@pytest.mark.parametrize(
    ("function", "metadata", "value", "comment", "reason"),
    [
        ("length_ratio", {"ref": "0123456789"}, 50.0, "5 of 10 characters", None),
        ("as_object", {"ref": "x"}, 42.0, "fixed", None),
        ("length_ratio", {}, None, None, "no expected text (metadata.ref is empty)"),
        ("broken", {"ref": "x"}, None, None, "mymetrics:broken failed: RuntimeError: model offline"),
        ("not_a_number", {"ref": "x"}, None, None, "mymetrics:not_a_number returned score 'high', not a finite number"),
    ],
)
def test_a_custom_async_function_scores_or_is_null_with_the_reason(
    custom_module: str, function: str, metadata: dict[str, Any], value: Any, comment: Any, reason: Any
) -> None:
    spec = CustomSpec(
        kind="custom", name="c", version=1, function=f"{custom_module}:{function}", expected_source="metadata.ref"
    )
    (score,) = asyncio.run(CustomEvaluator(spec).evaluate(ctx("01234", metadata, None)))
    assert (score.name, score.value, score.comment, score.reason) == ("c", value, comment, reason)


@pytest.fixture
def facts_project(tmp_path: Path, scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The shipped fact_recall experiment on three calls, the second without a reference summary."""
    root = tmp_path / "project"
    (root / "datasets").mkdir(parents=True)
    rows = [json.loads(line) for line in (REPO / "datasets" / "support_calls_v1.jsonl").read_text().splitlines()]
    rows[1]["metadata"].pop("reference_summary")
    (root / "datasets" / "support_calls_v1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:3]))
    copy_shipped(
        root, {"prompts": ["call-summary.yaml"], "evaluators": ["fact_recall_v1.yaml", "word_overlap_v1.yaml"]}
    )
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))
    write_yaml(
        root / "scoregate.yaml",
        {
            "project": "facts-test",
            "settings": {"model": "scripted", "concurrency": 1, "bootstrap_resamples": 200},
            "models": {"scripted": {"provider": "openai", "model": "scripted-1", "base_url": scripted_server.url}},
            "experiments": {"fact_recall": shipped["experiments"]["fact_recall"]},
        },
    )

    def reply(body: dict[str, Any]) -> str:
        if "careful evaluator" in json.dumps(body["messages"]):
            return json.dumps({"facts": FACTS})
        return "The agent refunds 240 dollars and sends a corrected invoice."

    scripted_server.responder = reply
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield root


def test_a_fact_recall_run_keeps_the_facts_in_the_run(facts_project: Path, scripted_server: ScriptedOpenAI) -> None:
    outcome = run_experiment(facts_project, "fact_recall", NO_RUN)
    judge = scripted_server.judge_requests()
    assert len(judge) == 2  # the item without a reference summary makes no judge call
    assert judge[0].body["response_format"]["json_schema"]["name"] == "facts"
    results = {r.item_id: {s.name: s for s in r.scores} for r in outcome.store.iter_results()}
    first = results["call-001"]
    assert first["fact_recall"].value == 75.0 and "3 of 4 expected facts kept" in (first["fact_recall"].comment or "")
    grouped = json.loads(str(first["fact_recall_facts"].value))
    assert [len(grouped[v]) for v in ("both", "expected", "got")] == [3, 1, 2]
    assert 0 < (first["word_recall"].value or 0) < 100 and "words used; missing:" in (
        first["word_recall"].comment or ""
    )
    second = results["call-002"]
    assert second["fact_recall"].value is None
    assert second["fact_recall"].reason == "no expected text (metadata.reference_summary is empty)"
    assert second["word_recall"].reason == "no expected text (metadata.reference_summary is empty)"
    stats = outcome.summary["scores"]["fact_recall"]
    assert stats["mean"] == 75.0 and stats["n_measured"] == 2 and stats["n_total"] == 3


def test_a_custom_function_that_cannot_be_loaded_is_refused_before_any_model_call(
    facts_project: Path, scripted_server: ScriptedOpenAI
) -> None:
    path = facts_project / "evaluators" / "word_overlap_v1.yaml"
    for function, message in [
        ("nosuchpkg.metrics:score", "cannot import 'nosuchpkg.metrics'"),
        ("scoregate.scoring.examples:nothing", "module 'scoregate.scoring.examples' has no 'nothing'"),
        ("scoregate.scoring.facts:fact_score", "scoregate.scoring.facts:fact_score is not an async function"),
    ]:
        data = yaml.safe_load(path.read_text())
        data["function"] = function
        path.write_text(yaml.safe_dump(data))
        with pytest.raises(ValidationFailed) as caught:
            plan_experiment(load_project(facts_project), "fact_recall")
        assert f"{path}: function" in caught.value.problems[0] and message in caught.value.problems[0]
    assert scripted_server.task_requests() == []


def cli(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    """Run `scoregate ARGS -C project` in-process; return what it printed (it must exit 0, no traceback)."""
    from scoregate.cli import main

    capsys.readouterr()
    monkeypatch.setattr(sys, "argv", ["scoregate", *args, "-C", str(project)])
    try:
        main()
    except SystemExit as exc:
        assert exc.code in (0, None), capsys.readouterr()
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.out


GROUPED = """    both (3):
      agent refunds 240 dollars
      agent sends corrected invoice
      charge was billed twice
    only expected (missed) (1):
      customer wants an email
    only produced (2):
      customer is happy
      agent is called Priya
"""


def test_runs_show_item_lists_the_facts_by_verdict_not_as_json(
    facts_project: Path,
    scripted_server: ScriptedOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_id = run_experiment(facts_project, "fact_recall", NO_RUN).run_id
    monkeypatch.setenv("COLUMNS", "80")

    out = cli(facts_project, capsys, monkeypatch, "runs", "show", run_id, "--item", "call-001")
    assert "  fact_recall: 75  fact_recall_v1\n    reasoning: 3 of 4 expected facts kept\n" + GROUPED in out
    assert '"subject"' not in out and "verdict" not in out  # no raw JSON blob
    assert out.count("customer wants an email") == 1  # listed once (the comment's copy is not repeated)

    detail = json.loads(cli(facts_project, capsys, monkeypatch, "runs", "show", run_id, "--item", "call-001", "--json"))
    groups = detail["fact_groups"]["fact_recall_facts"]
    assert [(g["title"], g["facts"]) for g in groups] == [
        ("both", ["agent refunds 240 dollars", "agent sends corrected invoice", "charge was billed twice"]),
        ("only expected (missed)", ["customer wants an email"]),
        ("only produced", ["customer is happy", "agent is called Priya"]),
    ]
    unmeasured = cli(facts_project, capsys, monkeypatch, "runs", "show", run_id, "--item", "call-002")
    assert "fact_recall: null — no expected text (metadata.reference_summary is empty)" in unmeasured
    assert "both (" not in unmeasured


def test_the_report_embeds_the_facts_by_verdict_for_the_opened_item(
    facts_project: Path, scripted_server: ScriptedOpenAI
) -> None:
    outcome = run_experiment(facts_project, "fact_recall", NO_RUN)
    assert outcome.report is not None
    html = outcome.report.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.DOTALL)
    assert found is not None
    data = json.loads(found.group(1).replace("<\\/", "</"))
    run = data["runs"][0]
    rows = {item["id"]: item["r"][0] for item in data["items"]}
    groups = rows["call-001"]["f"]["fact_recall_facts"]
    assert {g["title"]: g["facts"] for g in groups} == {
        "both": ["agent refunds 240 dollars", "agent sends corrected invoice", "charge was billed twice"],
        "only expected (missed)": ["customer wants an email"],
        "only produced": ["customer is happy", "agent is called Priya"],
    }
    cells = {run["score_keys"][s[0]][0]: s for s in rows["call-001"]["s"]}
    assert cells["fact_recall_facts"][1] == "both 3 · only expected (missed) 1 · only produced 2"  # not the JSON
    assert cells["fact_recall"][1:] == [75, None, "3 of 4 expected facts kept"]  # the facts are not repeated
    assert "f" not in rows["call-002"]  # no facts measured there
    assert "factGroups(name, groups)" in html  # the page renders them when the item is opened


@pytest.mark.skipif(find_chromium() is None, reason="no chromium installed (apt-get install chromium)")
def test_the_opened_item_of_the_report_shows_the_facts_by_verdict(
    facts_project: Path, scripted_server: ScriptedOpenAI
) -> None:
    outcome = run_experiment(facts_project, "fact_recall", NO_RUN)
    assert outcome.report is not None
    with Chromium(str(find_chromium())) as browser:
        browser.open(outcome.report)
        browser.evaluate("document.querySelector('tr.item-row[data-id=\"call-001\"]').click()")
        opened = str(browser.evaluate("document.querySelector('tr.detail').innerText"))
        assert browser.errors == [], browser.errors
    shown = "\n".join(line for line in opened.splitlines() if line.strip())
    assert "facts — fact_recall_facts\nboth (3)\nagent refunds 240 dollars\n" in shown
    assert "only expected (missed) (1)\ncustomer wants an email\n" in shown
    assert "only produced (2)\ncustomer is happy\nagent is called Priya\n" in shown
    assert '"subject"' not in opened


def test_changing_the_model_a_fact_recall_judge_calls_blocks_resume_and_names_it(
    facts_project: Path, scripted_server: ScriptedOpenAI
) -> None:
    """The judge model of a fact_recall evaluator is part of what a run measures, like an llm_judge's."""
    config_path = facts_project / "scoregate.yaml"
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config["models"]["facts-judge"] = {**config["models"]["scripted"], "model": "facts-judge-1"}
    write_yaml(config_path, config)
    evaluator_path = facts_project / "evaluators" / "fact_recall_v1.yaml"
    evaluator = yaml.safe_load(evaluator_path.read_text(encoding="utf-8"))
    write_yaml(evaluator_path, {**evaluator, "model": "facts-judge"})
    store = run_experiment(facts_project, "fact_recall", NO_RUN).store
    manifest_path = store.directory / "manifest.json"
    manifest_path.write_text(json.dumps({**store.manifest, "status": "interrupted"}), encoding="utf-8")
    config["models"]["facts-judge"]["model"] = "facts-judge-2"  # another judge: the facts it lists differ
    write_yaml(config_path, config)
    scripted_server.clear_requests()

    with pytest.raises(ScoregateError) as refused:
        run_experiment(facts_project, "fact_recall", replace(NO_RUN, resume=RunOptions.ResumeFrom(store.run_id)))

    assert f"cannot resume {store.run_id}: scoregate.yaml changed where this run reads it (models.facts-judge)" in (
        refused.value.message
    )
    assert scripted_server.chat_requests() == []
