"""The semantic tags track: the shipped dataset, `gold validate`, and runs through the engine and a scripted server."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.catalog.datasets import iter_items
from scoregate.catalog.plan import plan_experiment
from scoregate.tracks.project import load_project, write_project_schemas
from scoregate.tracks.tags.dataset import build_tags_dataset
from scoregate.tracks.tags.gold import GOLD_SCHEMA, validate_gold
from scoregate.tracks.tags.metrics import METRIC_KEYS, RISK_SEVERITIES, TOPIC_CATEGORIES
from scoregate.tracks.tags.run_summary import GATE_METRIC_KEYS
from support.projects import CliResult, copy_shipped, write_yaml
from support.scripted_openai import ScriptedOpenAI

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "datasets" / "support_calls_v1"
DATASET = REPO / "datasets" / "support_calls_v1.jsonl"
ITEMS = {item.id: item for _, item in iter_items(DATASET)}
NO_RUN = RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})), use_cache=False)


def test_the_shipped_dataset_covers_every_topic_risk_severity_and_assignee_case() -> None:
    assert len(ITEMS) >= 20 and all(item.expected_output is not None for item in ITEMS.values())
    topics = {t["label"] for i in ITEMS.values() for t in i.expected_output["topics"]}
    risks = {(r["type"], r["severity"]) for i in ITEMS.values() for r in i.expected_output["risks"]}
    actions = [a for i in ITEMS.values() for a in i.expected_output["actions"]]
    assert topics == {t for group in TOPIC_CATEGORIES.values() for t in group}
    assert risks == {(kind, s) for kind, allowed in RISK_SEVERITIES.items() for s in allowed}
    assert {a.get("assignee_role") for a in actions} == {"agent", "customer", "team", "unknown", None}
    assert all(i.metadata.get("reference_summary") for i in ITEMS.values())


def test_the_dataset_file_is_built_from_its_folder_and_every_gold_file_is_valid(tmp_path: Path) -> None:
    report = validate_gold(FOLDER / "goldens")
    assert report.files == len(ITEMS) and report.violations == []
    out = tmp_path / "support_calls_v1.jsonl"
    assert build_tags_dataset(FOLDER, out) == (len(ITEMS), len(ITEMS))
    assert out.read_text(encoding="utf-8") == DATASET.read_text(encoding="utf-8")


def test_the_published_gold_schema_is_current(tmp_path: Path) -> None:
    write_project_schemas(tmp_path)
    for path in tmp_path.iterdir():
        assert path.read_text() == (REPO / "schemas" / path.name).read_text(), f"run `make schemas` ({path.name})"
    assert json.loads((REPO / "schemas" / "gold-labels.schema.json").read_text()) == GOLD_SCHEMA


def gold(sample_id: str = "s-1", **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema_version": 1,
        "sample_id": sample_id,
        "dataset": "t",
        "annotator": "human",
        "annotated_at": "2026-01-08T12:00:00Z",
        "topics": [{"label": "pricing", "span": [0, 2], "confidence": 1.0}],
        "risks": [{"type": "escalation", "severity": "high", "segment_ids": [1]}],
        "actions": [{"description": "Send the proposal", "assignee_role": "agent"}],
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


VIOLATIONS: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    ("required", lambda d: d.pop("annotator"), "annotator", "required field is missing"),
    ("required-nested", lambda d: d["actions"][0].pop("description"), "actions[0].description", "required field"),
    ("vocabulary", lambda d: d["topics"][0].update(label="weather"), "topics[0].label", "not in the topic vocabulary"),
    ("risk-type", lambda d: d["risks"][0].update(type="boredom"), "risks[0].type", "unknown risk type 'boredom'"),
    ("severity", lambda d: d["risks"][0].update(type="competitor_mention"), "risks[0].severity",
     "'high' is not allowed for competitor_mention; use low, medium"),
    ("severity-enum", lambda d: d["risks"][0].update(severity="huge"), "risks[0].severity", "'huge' is not one of"),
    ("assignee", lambda d: d["actions"][0].update(assignee_role="boss"), "actions[0].assignee_role",
     "'boss' is not one of ['agent', 'customer', 'team', 'unknown']"),
    ("sample-id", lambda d: d.update(sample_id="other"), "sample_id", "is 'other' but the file is named for 's-1'"),
    ("type", lambda d: d["topics"][0].update(confidence=2), "topics[0].confidence", "2 is greater than the maximum"),
    ("extra", lambda d: d.update(labels=[]), "(file)", "'labels' was unexpected"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "change", "field", "message"), VIOLATIONS, ids=[v[0] for v in VIOLATIONS])
def test_gold_validate_reports_each_kind_of_violation_with_file_and_field(
    kind: str,
    change: Callable[[dict[str, Any]], None],
    field: str,
    message: str,
    tmp_path: Path,
    scoregate: Callable[..., CliResult],
) -> None:
    data = gold()
    change(data)
    path = tmp_path / "goldens" / "s-1_gold.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "goldens" / "s-2_gold.json").write_text(json.dumps(gold("s-2")), encoding="utf-8")
    result = scoregate("gold", "validate", str(tmp_path / "goldens"), project=None)
    assert result.code == 1
    assert f"{path}: {field}: " in result.out and message in result.out, result.out
    assert "2 gold file(s) checked: 1 valid, 1 with" in result.output


def test_gold_validate_on_broken_json_a_bad_name_and_a_valid_file(
    tmp_path: Path, scoregate: Callable[..., CliResult]
) -> None:
    broken = tmp_path / "a_gold.json"
    broken.write_text('{"schema_version": 1,\n  "sample_id": ', encoding="utf-8")
    result = scoregate("gold", "validate", str(broken), project=None)
    assert result.code == 1 and f"{broken}: line 2: not valid JSON" in result.out
    misnamed = tmp_path / "s-1.json"
    misnamed.write_text(json.dumps(gold()), encoding="utf-8")
    result = scoregate("gold", "validate", str(misnamed), project=None)
    assert result.code == 1 and "(file name): a gold file's name must end in _gold.json" in result.out
    good = tmp_path / "s-1_gold.json"
    good.write_text(json.dumps(gold()), encoding="utf-8")
    result = scoregate("gold", "validate", str(good), project=None)
    assert result.code == 0 and "1 gold file(s) checked: 1 valid" in result.out
    result = scoregate("gold", "validate", str(tmp_path / "nothing"), project=None)
    assert result.code == 1 and "no such file or folder" in result.output


def test_gold_commands_read_relative_paths_from_dash_c(
    tmp_path: Path, scoregate: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(FOLDER, tmp_path / "support_calls_v1")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    checked = scoregate("gold", "validate", "support_calls_v1/goldens", project=tmp_path)
    assert checked.code == 0 and "gold file(s) checked" in checked.out, checked.output
    built = scoregate("gold", "build", "support_calls_v1", "--out", "built.jsonl", project=tmp_path)
    assert built.code == 0, built.output
    assert (tmp_path / "built.jsonl").is_file() and not (elsewhere / "built.jsonl").exists()


def test_gold_build_names_a_transcript_byte_that_is_not_utf8_and_an_output_folder(
    tmp_path: Path, scoregate: Callable[..., CliResult]
) -> None:
    shutil.copytree(FOLDER, tmp_path / "support_calls_v1")
    (tmp_path / "taken").mkdir()
    into_folder = scoregate("gold", "build", "support_calls_v1", "--out", "taken", project=tmp_path)
    transcript = tmp_path / "support_calls_v1" / "transcripts" / "call-002.json"
    text = transcript.read_bytes()
    line = text[: text.index(b'"text"')].count(b"\n") + 1
    transcript.write_bytes(text.replace(b'"text": "', b'"text": "\xe9', 1))
    latin1 = scoregate("gold", "build", "support_calls_v1", project=tmp_path)

    assert into_folder.code == 1 and f"{tmp_path / 'taken'}: is a folder; name the file to write" in into_folder.output
    assert latin1.code == 1, latin1.output
    assert f"{transcript}:{line}: not UTF-8 (byte 0xe9" in latin1.output
    assert not (tmp_path / "support_calls_v1.jsonl").exists()


def reply_for(item_id: str) -> dict[str, Any]:
    """The scripted annotator: the gold labels, with known mistakes on two calls and synonyms on a third."""
    expected = json.loads(json.dumps(ITEMS[item_id].expected_output))
    out = {
        "topics": [t["label"] for t in expected["topics"]],
        "risks": [{"type": r["type"], "severity": r["severity"]} for r in expected["risks"]],
        "actions": [{"description": a["description"], "assignee_role": a.get("assignee_role", "unknown")}
                    for a in expected["actions"]],
    }  # fmt: skip
    if item_id == "call-001":  # billing, refund → billing, weather (one miss, one label outside the vocabulary)
        out["topics"] = ["Billing", "weather"]
        out["actions"] = out["actions"][:2]
    if item_id == "call-003":  # escalation medium → high: right type, wrong severity
        out["risks"][3]["severity"] = "high"
    if item_id == "call-002":
        out["topics"] = ["Login", "set-up"]  # listed synonyms of account_access and setup
    return out


@pytest.fixture
def tags_project(tmp_path: Path, scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The shipped tags files, call-022 without gold labels, the model being the scripted annotator."""
    root = tmp_path / "project"
    (root / "datasets").mkdir(parents=True)
    lines = DATASET.read_text(encoding="utf-8").splitlines()
    stripped = [json.loads(line) for line in lines]
    stripped[-1].pop("expected_output")
    (root / "datasets" / "support_calls_v1.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in stripped), encoding="utf-8"
    )
    copy_shipped(
        root,
        {
            "prompts": ["tags-annotator.yaml", "call-summary.yaml"],
            "evaluators": ["tags_v1.yaml", "summary_judge_v1.yaml"],
        },
    )
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))
    write_yaml(
        root / "scoregate.yaml",
        {
            "project": "tags-test",
            "settings": {"model": "scripted", "concurrency": 4, "bootstrap_resamples": 300},
            "models": {"scripted": {"provider": "openai", "model": "scripted-1", "base_url": scripted_server.url}},
            "gates": [g for g in shipped["gates"] if g["name"].startswith(("tags_", "summary_"))],
            "experiments": {k: shipped["experiments"][k] for k in ("tags", "tags_summary")},
        },
    )
    by_transcript = {item.input["transcript"]: item_id for item_id, item in ITEMS.items()}

    def reply(body: dict[str, Any]) -> str:
        if "careful evaluator" in json.dumps(body["messages"]):
            return json.dumps({"reasoning": "ok", "summary_faithfulness": 8, "summary_coverage": 7,
                               "summary_clarity": 9})  # fmt: skip
        text = body["messages"][-1]["content"].split("`[id] speaker: text`):\n", 1)[-1]
        text = text.split("\n\nAnnotate this call now", 1)[0]
        if text in by_transcript:
            return json.dumps(reply_for(by_transcript[text]))
        return "The customer called; the agent helped."

    scripted_server.responder = reply
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield root


def test_a_tags_run_scores_every_sample_and_reports_micro_metrics_with_coverage(
    tags_project: Path, scripted_server: ScriptedOpenAI
) -> None:
    outcome = run_experiment(tags_project, "tags", NO_RUN)
    (request, *_) = scripted_server.task_requests()
    assert request.body["response_format"]["json_schema"]["name"] == "call_annotation"
    results = {r.item_id: {s.name: s for s in r.scores} for r in outcome.store.iter_results()}
    assert len(results) == 22
    for scores in results.values():
        assert list(scores)[: len(METRIC_KEYS)] == list(METRIC_KEYS)
        assert all(s.value is not None or s.reason for s in scores.values())
    assert {s.reason for s in results["call-022"].values()} == {
        "no gold labels for this sample (expected_output is empty)"
    }
    first = results["call-001"]
    assert first["topic_precision"].value == 0.5 and first["topic_recall"].value == 0.5
    assert (
        first["labels_outside_vocabulary"].value == 1 and first["labels_outside_vocabulary"].comment == "topic:weather"
    )
    detail = json.loads(str(first["tags_detail"].value))
    assert detail["predicted_topics"] == ["billing", "weather"] and detail["gold_topics"] == ["billing", "refund"]
    assert [m["matched"] for m in detail["action_matches"]] == [True, True, False]
    assert results["call-002"]["topic_f1"].value == 1.0  # synonyms normalised
    assert results["call-003"]["risk_f1"].value == 1.0 and results["call-003"]["risk_severity_f1"].value == 0.75

    tags = outcome.summary["tags"]
    gold_topics = sum(len(ITEMS[i].expected_output["topics"]) for i in ITEMS if i != "call-022")
    topic_f1 = tags["metrics"]["topic_f1"]
    assert topic_f1["value"] == pytest.approx(2 * (gold_topics - 1) / (2 * (gold_topics - 1) + 1 + 1))
    assert topic_f1["ci_low"] <= topic_f1["value"] <= topic_f1["ci_high"]
    assert topic_f1["samples_measured"] == 21 and topic_f1["samples_skipped"] == 1
    assert topic_f1["coverage"] == pytest.approx(21 / 22) and topic_f1["reason"] is None
    assert tags["coverage"] == {
        "samples_total": 22, "samples_with_gold_labels": 21, "samples_with_topics": 21,
        "samples_with_risks": sum(bool(ITEMS[i].expected_output["risks"]) for i in ITEMS if i != "call-022"),
        "samples_with_actions": 21, "gold_label_coverage": pytest.approx(21 / 22),
    }  # fmt: skip
    assert tags["not_scored"] == {"model_call_failed": 0, "no_gold_labels": 1}
    assert tags["outside_vocabulary"] == {"topic:weather": 1}
    assert set(GATE_METRIC_KEYS) <= set(outcome.summary["scores"])
    gates = {g["name"]: g for g in outcome.summary["gates"]}
    assert set(gates) == {"tags_topic_f1", "tags_risk_f1", "tags_risk_weighted_f1", "tags_action_accuracy"}
    assert gates["tags_topic_f1"]["observed"] == pytest.approx(topic_f1["value"])
    assert all(g["status"] == "pass" for g in gates.values()), gates


def test_the_summary_mode_judges_faithfulness_coverage_and_clarity_against_the_reference(
    tags_project: Path, scripted_server: ScriptedOpenAI
) -> None:
    options = RunOptions(
        selection=RunOptions.Selection(limit=3),
        mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})),
        use_cache=False,
    )
    outcome = run_experiment(tags_project, "tags_summary", options)
    asked = [judge.text for judge in scripted_server.judge_requests()]  # the items' judges run side by side
    for item_id in list(ITEMS)[:3]:
        assert any(ITEMS[item_id].metadata["reference_summary"] in text for text in asked), item_id
    scores = outcome.summary["scores"]
    assert (scores["summary_faithfulness"]["mean"], scores["summary_coverage"]["mean"]) == (8, 7)
    gates = {g["name"]: g["status"] for g in outcome.summary["gates"]}
    assert gates == {"summary_faithfulness": "pass", "summary_coverage": "fail", "summary_clarity": "pass"}


def test_the_shipped_tags_experiments_plan() -> None:
    project = load_project(REPO)
    assert plan_experiment(project, "tags").dataset_scan.count == len(ITEMS)
    assert plan_experiment(project, "tags_summary").dataset_scan.count == len(ITEMS)
