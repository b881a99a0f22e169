"""`scoregate report`, the report every run writes, the one `compare` writes, and what the page may hold."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from scoregate.report import build_report, write_report
from scoregate.report.run_reader import change_fraction, verdict_words
from scoregate.store.record import RunSummary
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore
from support.projects import CliResult, Runs

EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", re.IGNORECASE)


def page_data(html: str) -> dict:
    """The JSON the page embeds for its item table."""
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.DOTALL)
    assert found is not None
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_every_run_writes_its_report_and_run_prints_the_path(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:  # fmt: skip
    result = scoregate("run", "counters", "--no-mlflow")

    assert result.code == 0, result.output
    run_id = runs.latest()
    path = runs.root / run_id / "report.html"
    assert f"report: {path}" in result.output
    html = path.read_text(encoding="utf-8")
    assert not EXTERNAL.search(html), "the report must open offline: nothing loaded from elsewhere"
    assert "PASS — all 2 gate(s) passed" in html and run_id in html
    data = page_data(html)
    assert [item["id"] for item in data["items"]] == [
        r["item_id"] for r in sorted(runs.results(), key=lambda r: r["index"])
    ]
    assert data["runs"][0]["dataset_hash"] == runs.manifest()["receipts"]["dataset"]["content_hash"]


def test_report_of_two_runs_and_compare_write_the_comparison_page(
    scoregate: Callable[..., CliResult], runs: Runs, tmp_path: Path
) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    a, b = runs.ids()

    out = tmp_path / "pair.html"
    result = scoregate("report", a, b, "-o", str(out))
    assert result.code == 0, result.output
    assert f"report: {out}" in result.output
    html = out.read_text(encoding="utf-8")
    assert 'id="comparison"' in html and "W/T/L" in html and f"A = {a}" in html

    compared = scoregate("compare", a, b, "--no-mlflow")
    assert compared.code == 0, compared.output
    written = runs.root / b / f"compare-{a}.html"
    assert f"report: {written}" in compared.output and written.is_file()
    assert runs.ids() == [a, b], "reports live inside run directories, never beside them"


def test_report_of_unknown_or_unfinished_runs_says_what_to_do(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:  # fmt: skip
    missing = scoregate("report", "no-such-run")
    assert missing.code != 0 and "no run 'no-such-run'" in missing.output and "scoregate runs list" in missing.output

    assert scoregate("run", "counters", "--no-mlflow").code == 0
    run_id = runs.latest()
    (runs.root / run_id / "summary.json").unlink()
    unfinished = scoregate("report", run_id)
    assert unfinished.code != 0 and "did not finish" in unfinished.output and "--resume" in unfinished.output


def test_report_output_is_read_from_the_project_and_a_folder_is_refused(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert scoregate("run", "counters", "--limit", "2", "--no-mlflow").code == 0
    run_id = runs.latest()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    written = scoregate("report", run_id, "-o", "reports/latest.html")
    folder = scoregate("report", run_id, "-o", "datasets")

    assert written.code == 0, written.output
    assert (project_dir / "reports" / "latest.html").is_file() and list(elsewhere.iterdir()) == []
    assert folder.code == 2, folder.output
    assert f"{project_dir / 'datasets'} is a folder; name the file to write" in folder.output


def test_long_texts_are_cut_to_the_budget_and_say_where_the_whole_text_is(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, "r1", {"run_id": "r1", "receipts": {}})
    for i in range(3):
        store.append(ItemResult(i, f"item-{i}", "p@1", {"text": "word " * 5000}, "answer " * 10))
    store.close()
    store.write_summary({"run_id": "r1", "scores": {}, "run_metrics": {}, "gates": [], "verdict": "no_gates"})

    from scoregate.report import ReportOptions

    report = build_report([store], ReportOptions(text_budget=3000))
    text = report["items"][0]["in"]["text"]
    assert len(text) < 400 and text.endswith(f"…[+{25000 - report['clip_limit']:,} chars]")
    assert report["items"][0]["r"][0]["o"] == "answer " * 10  # short texts stay whole
    assert report["clipped"] == 3
    html = write_report([store], tmp_path / "r.html").read_text(encoding="utf-8")
    assert "NO GATES" in html


def test_change_fraction_measures_how_much_an_output_changed() -> None:
    assert change_fraction("a b c d", "a b c d") == 0.0
    assert change_fraction("a b c d", "w x y z") == 1.0
    assert 0 < change_fraction("a b c d", "a b c e") < 0.5
    assert change_fraction({"k": 1}, {"k": 2}) > 0


@pytest.mark.usefixtures("mlflow_store")
def test_the_report_is_an_mlflow_artifact_of_the_run(scoregate: Callable[..., CliResult], runs: Runs) -> None:
    assert scoregate("run", "counters").code == 0
    client = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])
    (experiment,) = [e for e in client.search_experiments() if e.name.startswith("counters (")]
    (run,) = client.search_runs([experiment.experiment_id])
    assert "report.html" in {a.path for a in client.list_artifacts(run.info.run_id)}


def test_a_run_larger_than_the_table_lists_its_first_items_and_counts_them_all(tmp_path: Path) -> None:
    from scoregate.report import ReportOptions
    from scoregate.store.records import Score

    store = RunStore.create(tmp_path, "big", {"run_id": "big", "receipts": {}})
    for i in reversed(range(30)):  # stored out of order, as concurrent items finish
        store.append(ItemResult(i, f"item-{i:02d}", "p@1", {}, "out", scores=[Score("s", i, "numeric", "e")]))
    store.close()
    scores = {"s": {"data_type": "numeric", "mean": 14.5, "n_measured": 30, "n_total": 30}}
    gate = {"name": "g", "metric": "s", "stat": "mean", "op": ">=", "threshold": 20.0, "observed": 14.5,
            "coverage": 1.0, "status": "fail", "detail": "mean = 14.5"}  # fmt: skip
    store.write_summary({"run_id": "big", "scores": scores, "run_metrics": {}, "gates": [gate], "verdict": "fail"})

    report = build_report([store], ReportOptions(max_items=10))
    assert [item["id"] for item in report["items"]] == [f"item-{i:02d}" for i in range(10)]
    assert len(report["distributions"][0]["values"]["s"]) == 30  # the charts count every item
    assert report["runs"][0]["gates"][0]["broken"] == 20  # items 0..19 are below 20
    assert "lists the first 10 of run big's 30 items" in report["notes"][0]


def test_no_report_skips_the_page_and_report_writes_it_later(scoregate: Callable[..., CliResult], runs: Runs) -> None:
    result = scoregate("run", "counters", "--no-mlflow", "--no-report")
    assert result.code == 0, result.output
    path = runs.root / runs.latest() / "report.html"
    assert not path.exists() and "report:" not in result.output
    later = scoregate("report", runs.latest())
    assert later.code == 0 and f"report: {path}" in later.output and path.is_file()


def test_the_report_of_a_lone_run_reads_no_results_for_a_leaderboard(
    scoregate: Callable[..., CliResult], runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0

    def no_second_pass(store: RunStore) -> Any:
        raise AssertionError(f"{store.run_id}: results read again for a leaderboard of one run")

    monkeypatch.setattr(RunStore, "iter_all_records", no_second_pass)
    report = build_report([RunStore.open(runs.root, runs.latest())])

    assert report["leaderboard"] is None and len(report["items"]) == 6


def test_a_run_report_shows_the_leaderboard_of_its_experiment_computed_now(
    scoregate: Callable[..., CliResult],
    runs: Runs,
    project_dir: Path,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> None:
    config = project_dir / "scoregate.yaml"
    edit_yaml(config, lambda c: c["models"].update({"<b>-model": dict(c["models"]["scripted"])}))
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    first = runs.latest()
    (runs.root / "leaderboard.json").write_text('{"entries": [{"model": "stale"}]}', encoding="utf-8")
    assert scoregate("run", "counters", "--no-mlflow", "--model", "<b>-model", "--limit", "2").code == 0
    second = runs.latest()

    html = (runs.root / second / "report.html").read_text(encoding="utf-8")

    section = re.search(r'<section id="leaderboard">(.*?)</section>', html, re.DOTALL)
    assert section is not None, "the report of a run whose experiment has two runs shows the leaderboard"
    rows = re.findall(r"<tr( class=\"this-run\")? data-model=\"([^\"]*)\">(.*?)</tr>", section.group(1))
    assert [(bool(mine), model) for mine, model, _ in rows] == [(False, "scripted"), (True, "&lt;b&gt;-model")]
    assert '2/6 <span class="tag low">low</span>' in rows[1][2] and "6/6" in rows[0][2]
    assert f'href="../{first}/report.html"' in rows[0][2] and f'href="../{second}/report.html"' in rows[1][2]
    assert "stale" not in section.group(1) and "<b>-model" not in section.group(1)
    first_html = (runs.root / first / "report.html").read_text(encoding="utf-8")
    assert 'id="leaderboard"' not in first_html  # written when its experiment had one run


def gate(name: str, status: str) -> dict[str, Any]:
    """A gate verdict as summary.json stores it."""
    return {"name": name, "metric": "s", "stat": "mean", "op": ">=", "threshold": 1.0, "observed": None,
            "coverage": 1.0, "status": status, "detail": "-"}  # fmt: skip


def test_the_verdict_banner_names_the_failed_gates_and_apart_those_not_judged(tmp_path: Path) -> None:
    gates = [gate("a", "fail"), gate("b", "pass"), gate("c", "incomplete"), gate("d", "fail")]
    store = RunStore.create(tmp_path, "r1", {"run_id": "r1", "receipts": {}})
    store.append(ItemResult(0, "item-0", "p@1", {}, "out"))
    store.close()
    store.write_summary({"run_id": "r1", "scores": {}, "run_metrics": {}, "gates": gates, "verdict": "fail"})

    html = write_report([store], tmp_path / "r.html").read_text(encoding="utf-8")

    assert "FAIL — 2 of 4 gate(s) failed: a, d; 1 of 4 gate(s) could not be judged: c" in html
    incomplete = RunSummary.model_validate({"run_id": "r1", "gates": gates[1:3], "verdict": "incomplete"})
    assert verdict_words(incomplete) == "INCOMPLETE — 1 of 2 gate(s) could not be judged: c"
    failed = RunSummary.model_validate({"run_id": "r1", "gates": gates[:2], "verdict": "fail"})
    assert verdict_words(failed) == "FAIL — 1 of 2 gate(s) failed: a"


def test_the_report_knows_each_judge_scores_declared_scale(project_dir: Path, tmp_path: Path) -> None:
    from scoregate.report.write import project_report_options

    scales = project_report_options(project_dir).scales or {}
    assert scales["faithfulness_score"] == (1.0, 5.0) and scales["conciseness_score"] == (1.0, 5.0)
    assert "word_count" not in scales  # a counter declares no range

    from scoregate.report import ReportOptions
    from scoregate.store.records import Score

    store = RunStore.create(tmp_path, "r1", {"run_id": "r1", "receipts": {}})
    for i, value in enumerate((1, 3, 5)):
        scores = [Score("faithfulness_score", value, "numeric", "judge"), Score("ok", i > 0, "boolean", "c")]
        store.append(ItemResult(i, f"item-{i}", "p@1", {}, "out", scores=scores))
    store.close()
    stats = {"data_type": "numeric", "mean": 3.0, "n_measured": 3, "n_total": 3}
    summary_scores = {"faithfulness_score": stats, "ok": dict(stats, data_type="boolean")}
    summary = {"run_id": "r1", "scores": summary_scores, "run_metrics": {}, "gates": [], "verdict": "no_gates"}
    store.write_summary(summary)

    report = build_report([store], ReportOptions(scales=scales))
    assert {s["name"]: s["scale"] for s in report["runs"][0]["scores"]} == {
        "faithfulness_score": [1.0, 5.0], "ok": [0.0, 1.0],
    }  # fmt: skip
    path = write_report([store], tmp_path / "r.html", ReportOptions(scales={"faithfulness_score": (1.0, 6.0)}))
    html = path.read_text(encoding="utf-8")
    histogram = html.split('aria-label="histogram of faithfulness_score"', 1)[1].split("</svg>", 1)[0]
    assert [t.split(":")[0] for t in re.findall(r"<title>([^<]*)</title>", histogram)] == list("123456")


def test_one_failed_item_says_its_reason_once_in_the_headline_and_the_terminal(
    scoregate: Callable[..., CliResult], runs: Runs, scripted_server: Any
) -> None:
    scripted_server.fail_next(400, body='{"error": {"message": "the one failed item"}}')

    result = scoregate("run", "smoke", "--no-mlflow")

    assert result.code == 0, result.output
    summary = runs.summary()
    unmeasured = [k for k, s in summary["scores"].items() if s["n_measured"] < s["n_total"]]
    assert len(unmeasured) >= 10  # the failed item left (almost) every score null for the same reason
    assert result.output.count("the one failed item") == 1, result.output
    html = (runs.root / runs.latest() / "report.html").read_text(encoding="utf-8")
    headline = re.search(r'<section id="headline">(.*?)</section>', html, re.DOTALL)
    assert headline is not None
    assert headline.group(1).count("the one failed item") == 1
    assert re.search(r"<th>not measured</th><td><div class=\"why\">every score[^<]*the one failed item", html)


def test_a_free_model_gets_no_chart_of_zero_costs_but_says_it_is_free(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path, tmp_path: Path, edit_yaml: Callable[..., None]
) -> None:
    def free(config: dict[str, Any]) -> None:
        config["models"]["scripted"].update(input_cost_per_mtok=0, output_cost_per_mtok=0)

    edit_yaml(project_dir / "scoregate.yaml", free)
    for _ in range(3):
        assert scoregate("run", "counters", "--no-mlflow").code == 0
    assert all(c["cost_usd"] == 0 for r in runs.results() for c in r["calls"])  # measured, and zero

    html = (runs.root / runs.latest() / "report.html").read_text(encoding="utf-8")
    ranking = tmp_path / "ranking.html"
    assert scoregate("report", *runs.ids(), "-o", str(ranking)).code == 0
    ranked = ranking.read_text(encoding="utf-8")

    assert "histogram of cost per item USD" not in html
    assert "free model: no cost (0 USD for each of the 6 items)" in html
    assert 'id="ranking"' in ranked and "against cost per item USD" not in ranked
    assert "every run was free (0 USD per item): no accuracy-against-cost front to draw" in ranked
