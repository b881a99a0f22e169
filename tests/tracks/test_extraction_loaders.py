"""Extraction loaders: the real SGD dialogues end to end, and paraloq/json_data_extraction from a local file."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import typer
import yaml
from typer.testing import CliRunner

from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.catalog.datasets import iter_items
from scoregate.errors import ScoregateError
from scoregate.scoring.base import EvalContext
from scoregate.tracks.extraction import check_items, load_paraloq, load_sgd
from scoregate.tracks.extraction import cli as extraction_cli
from scoregate.tracks.extraction.kind import ExtractionEvaluator
from scoregate.tracks.extraction.run_summary import extraction_run_summary
from scoregate.tracks.extraction.spec import ExtractionSpec
from support.projects import write_yaml
from support.scripted_openai import ScriptedOpenAI

REPO = Path(__file__).resolve().parents[2]
SGD = REPO / ".." / "shared" / "data" / "sgd_extraction" / "sgd_extraction.jsonl"
needs_sgd = pytest.mark.skipif(not SGD.is_file(), reason=f"real SGD data not found at {SGD}")
EVALUATOR = ExtractionEvaluator(ExtractionSpec(kind="extraction", name="extraction_v1", version=1))


def cli_app() -> typer.Typer:
    """The extraction commands as `scoregate` registers them."""
    app = typer.Typer()
    app.command("connection-test")(extraction_cli.connection_test_command)
    app.add_typer(extraction_cli.app, name="extraction")
    return app


def _score(item: Any, output: Any) -> dict[str, Any]:
    ctx = EvalContext(item.id, item.input, output, item.expected_output, item.metadata, None)  # type: ignore[arg-type]
    return {s.name: s for s in EVALUATOR.score(ctx)}


@needs_sgd
def test_sgd_items_load_and_the_three_self_violating_references_are_reported_not_scored() -> None:
    items = list(load_sgd(SGD))
    raw = [json.loads(line) for line in SGD.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert [i.id for i in items] == [r["id"] for r in raw] and len(items) == 170
    first = items[0]
    assert first.input["schema"] == raw[0]["json_schema"] and first.expected_output == raw[0]["expected"]
    assert first.metadata["domain"] == "Restaurants_2"
    assert first.metadata["expected_alternatives"]["time"] == ["11:30 am", "half past 11 in the morning"]

    problems = check_items(items)
    assert len(problems) == 3
    assert all("violates its own schema" in p.problem and "'dontcare' is not one of" in p.problem for p in problems)
    bad = {p.item_id for p in problems}
    for item in items:
        scores = _score(item, json.dumps(item.expected_output))
        if item.id in bad:
            assert all(s.value is None and "violates its own schema" in (s.reason or "") for s in scores.values())
        else:
            assert scores["eqs"].value == 1.0 and scores["exact_match"].value == 1.0
    # Another acceptable surface form from expected_alternatives is an exact match.
    spoken = {**first.expected_output, "time": "half past 11 in the morning"}
    assert _score(first, spoken)["exact_match"].value == 1.0


@needs_sgd
def test_imported_sgd_dataset_runs_and_the_summary_lists_the_unscored_references(
    tmp_path: Path, scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    out = root / "datasets" / "sgd_v1.jsonl"
    imported = CliRunner().invoke(cli_app(), ["extraction", "import-sgd", str(SGD), "--out", str(out)])
    assert imported.exit_code == 0, imported.output
    text = " ".join(imported.output.split())
    assert "wrote 170 items" in text and "167 of 170 items can be scored; 3 cannot" in text
    meta = yaml.safe_load(out.with_suffix(".yaml").read_text(encoding="utf-8"))
    assert meta["input_schema"]["required"] == ["text", "schema"]
    for folder, name in (("prompts", "extraction.yaml"), ("evaluators", "extraction_v1.yaml")):
        (root / folder).mkdir()
        (root / folder / name).write_bytes((REPO / folder / name).read_bytes())
    write_yaml(
        root / "scoregate.yaml",
        {
            "settings": {"model": "scripted", "concurrency": 4, "bootstrap_resamples": 100},
            "models": {"scripted": {"provider": "openai", "model": "scripted-1", "base_url": scripted_server.url}},
            "experiments": {"sgd": {"dataset": "sgd_v1", "prompt": "extraction", "evaluators": ["extraction_v1"]}},
        },
    )
    expected = {i.input["text"]: i.expected_output for _, i in iter_items(out)}
    scripted_server.responder = lambda body: json.dumps(
        expected[body["messages"][-1]["content"].split("Text:\n", 1)[1].split("\n\nExtract information", 1)[0]]
    )
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST"):
        monkeypatch.delenv(name, raising=False)

    outcome = run_experiment(
        root, "sgd", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})), use_cache=False)
    )

    assert outcome.summary["scores"]["eqs"]["n_measured"] == 167 and outcome.summary["scores"]["eqs"]["mean"] == 1.0
    assert outcome.summary["scores"]["eqs"]["null_reasons"]  # the three unscored items say why
    report = extraction_run_summary([EVALUATOR], outcome.store, outcome.summary, resamples=100)["extraction"]
    assert report["scored"] == 167 and report["not_scored"]["reference_problem"] == 3
    assert len(report["unscored_references"]) == 3
    assert report["metrics"]["field_f1_partial"] == 1.0 and report["metrics"]["exact_match_rate"] == 1.0


PARALOQ_ROWS = [
    {
        "title": "Order confirmation",
        "topic": "ecommerce",
        "medium": "email",
        "schema": json.dumps(
            {"type": "object", "properties": {"order_id": {"type": "string"}, "total": {"type": "number"}}}
        ),
        "item": json.dumps({"order_id": "A-17", "total": 42.5}),
        "text": "Your order A-17 is confirmed. Total: 42.50.",
    },
    {
        "title": "Lab result",
        "topic": "medical",
        "medium": "report",
        "schema": json.dumps({"type": "object", "properties": {"hba1c": {"type": "number"}}, "required": ["hba1c"]}),
        "item": json.dumps({"hba1c": "6.1%"}),  # violates its own schema: a string where a number is required
        "text": "HbA1c 6.1%.",
    },
    {
        "title": "Flight",
        "topic": "travel",
        "medium": "sms",
        "schema": json.dumps({"type": "object", "properties": {"gate": {"type": "string"}}}),
        "item": json.dumps({"gate": "B12"}),
        "text": "Boarding at gate B12.",
    },
]


@pytest.fixture(params=["parquet", "jsonl"])
def paraloq_file(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A small local copy in the hub's format: text, schema (JSON text), item (JSON text), title, topic, medium."""
    if request.param == "parquet":
        path = tmp_path / "data.parquet"
        pd.DataFrame(PARALOQ_ROWS).to_parquet(path)
    else:
        path = tmp_path / "data.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in PARALOQ_ROWS), encoding="utf-8")
    return path


def test_paraloq_rows_become_items_and_a_self_violating_reference_is_reported(paraloq_file: Path) -> None:
    items = list(load_paraloq(paraloq_file))

    assert [i.id for i in items] == ["paraloq-train-00000", "paraloq-train-00001", "paraloq-train-00002"]
    assert items[0].input == {"text": PARALOQ_ROWS[0]["text"], "schema": json.loads(PARALOQ_ROWS[0]["schema"])}
    assert items[0].expected_output == {"order_id": "A-17", "total": 42.5}
    assert items[0].metadata["domain"] == "ecommerce" and items[0].metadata["title"] == "Order confirmation"
    (problem,) = check_items(items)
    assert problem.item_id == "paraloq-train-00001" and "'6.1%' is not of type 'number'" in problem.problem
    assert [i.id for i in load_paraloq(paraloq_file, limit=2)] == ["paraloq-train-00000", "paraloq-train-00001"]


def test_paraloq_import_and_check_commands(paraloq_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "datasets" / "paraloq_v1.jsonl"
    runner = CliRunner()
    imported = runner.invoke(cli_app(), ["extraction", "import-hf", "--source", str(paraloq_file), "--out", str(out)])
    assert imported.exit_code == 0, imported.output
    assert "2 of 3 items can be scored; 1 cannot" in " ".join(imported.output.split())
    checked = runner.invoke(cli_app(), ["extraction", "check", str(out)])
    assert checked.exit_code == 1 and "paraloq-train-00001" in checked.output
    shipped = runner.invoke(cli_app(), ["extraction", "check", str(REPO / "datasets" / "extraction_v1.jsonl")])
    assert shipped.exit_code == 0 and "56 of 56 items can be scored" in " ".join(shipped.output.split())


def test_paraloq_errors_name_the_row_and_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps({**PARALOQ_ROWS[0], "schema": "{not json"}) + "\n", encoding="utf-8")
    with pytest.raises(ScoregateError) as bad_json:
        list(load_paraloq(broken))
    assert "broken.jsonl [train] row 0: column 'schema' is not valid JSON" in bad_json.value.render()
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(json.dumps({"question": "q", "answer": "a"}) + "\n", encoding="utf-8")
    with pytest.raises(ScoregateError) as bad_columns:
        list(load_paraloq(wrong))
    assert "missing column(s) text, schema, item; found answer, question" in bad_columns.value.render()
    assert "columns text, schema (JSON) and item (JSON)" in bad_columns.value.render()
    monkeypatch.setitem(sys.modules, "datasets", None)  # as if `datasets` were not installed
    with pytest.raises(ScoregateError) as caught:
        list(load_paraloq("paraloq/json_data_extraction"))
    assert "pip install datasets" in caught.value.render()


@pytest.mark.skipif(importlib.util.find_spec("datasets") is None, reason="the `datasets` library is not installed")
def test_paraloq_local_file_through_the_datasets_library(tmp_path: Path) -> None:
    path = tmp_path / "data.parquet"
    pd.DataFrame(PARALOQ_ROWS).to_parquet(path)
    items = list(load_paraloq(path))
    assert [i.expected_output for i in items] == [json.loads(r["item"]) for r in PARALOQ_ROWS]


def test_a_failed_import_leaves_the_dataset_it_would_replace_as_it_was(tmp_path: Path) -> None:
    good = {"id": "s1", "text": "Book a table for two", "json_schema": {"type": "object"}, "expected": {}}
    source = tmp_path / "sgd_extraction.jsonl"
    source.write_text(json.dumps(good) + "\n{broken\n", encoding="utf-8")
    out = tmp_path / "datasets" / "sgd.jsonl"
    out.parent.mkdir()
    out.write_text('{"id": "kept", "input": {"text": "t", "schema": {}}}\n', encoding="utf-8")
    out.with_suffix(".yaml").write_text("description: hand-written\n", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in out.parent.iterdir()}

    result = CliRunner().invoke(cli_app(), ["extraction", "import-sgd", str(source), "--out", str(out)])

    assert result.exit_code == 1
    assert {p.name: p.read_bytes() for p in out.parent.iterdir()} == before
