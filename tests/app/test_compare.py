"""`scoregate compare`: paired statistics per shared score, reproduced here independently with scipy."""

from __future__ import annotations

import json
import math
import os
import re
import statistics
from collections.abc import Callable, Mapping
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import pytest
from rich.cells import cell_len
from scipy import stats

from scoregate.analysis.compare_runs import compare_runs
from scoregate.app.comparison import CompareOutcome
from scoregate.cli import compare_cmd
from scoregate.errors import ExitCode, ScoregateError
from scoregate.report.data import ReportOptions, build_report
from scoregate.report.page import render_page
from scoregate.store.run_store import RunStore
from support.compare_runs import DATASET_HASH, small_runs, write_run
from support.compare_runs import cli as cli  # the fixture
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, json_for_schema, request_schema

RESAMPLES = 2000


def two_runs(runs_dir: Path) -> tuple[RunStore, RunStore]:
    """A baseline and a candidate on 40 shared items (+3 only in A, +2 only in B) with known differences."""
    rng = np.random.default_rng(7)
    n = 40
    quality_a = rng.integers(1, 5, size=n)
    quality_b = np.clip(quality_a + rng.choice([0, 1, 1, 2], size=n), 1, 5)
    halluc_a = rng.integers(0, 4, size=n)
    halluc_b = np.maximum(halluc_a - rng.choice([0, 1, 1], size=n), 0)
    noise_a = rng.integers(1, 6, size=n)
    noise_b = rng.integers(1, 6, size=n)
    a: dict[str, dict[str, Any]] = {}
    b: dict[str, dict[str, Any]] = {}
    for i in range(n):
        a[f"item-{i:02d}"] = {"quality": int(quality_a[i]), "hallucination_count": int(halluc_a[i]),
                              "noise": int(noise_a[i]), "format_ok": bool(i % 3), "category": "news"}  # fmt: skip
        b[f"item-{i:02d}"] = {"quality": int(quality_b[i]) if i % 10 else None,  # 4 items unmeasured in B
                              "hallucination_count": int(halluc_b[i]), "noise": int(noise_b[i]),
                              "format_ok": bool(i % 3 or i % 2), "category": "tools", "new_score": 1.0}  # fmt: skip
    for extra in ("only-a-1", "only-a-2", "only-a-3"):
        a[extra] = {"quality": 1, "hallucination_count": 9, "noise": 1, "format_ok": False, "category": "news"}
    for extra in ("only-b-1", "only-b-2"):
        b[extra] = {"quality": 5, "hallucination_count": 0, "noise": 5, "format_ok": True, "category": "news"}
    return write_run(runs_dir, "run-a", a), write_run(runs_dir, "run-b", b)


def paired_values(a: RunStore, b: RunStore, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The score's values on items measured in both runs, in run A's dataset order (read straight from the files).

    Dataset order, not file order: items finish out of order under concurrency, and the bootstrap
    resamples by position, so the same seed needs the same order.
    """
    rows_a = [json.loads(line) for line in (a.directory / "results.jsonl").read_text().splitlines()]
    rows_a.sort(key=lambda r: r["index"])
    rows_b = {r["item_id"]: r for r in map(json.loads, (b.directory / "results.jsonl").read_text().splitlines())}
    xs, ys = [], []
    for row in rows_a:
        other = rows_b.get(row["item_id"])
        if other is None:
            continue
        x = next((s["value"] for s in row["scores"] if s["name"] == name), None)
        y = next((s["value"] for s in other["scores"] if s["name"] == name), None)
        if x is not None and y is not None:
            xs.append(float(x))
            ys.append(float(y))
    return np.array(xs), np.array(ys)


def holm_levels_by_hand(secondary: dict[str, tuple[np.ndarray, np.ndarray]], resamples: int) -> dict[str, float]:
    """Holm step-down CI levels: the k-th smallest p of m at 1 − 0.05/(m − k) while every earlier CI excluded 0."""
    p = {name: stats.wilcoxon(y - x, zero_method="pratt").pvalue for name, (x, y) in secondary.items()}
    levels, stepping, m, level = {}, True, len(p), 0.95
    for k, name in enumerate(sorted(p, key=lambda n: p[n])):
        level = 1 - 0.05 / (m - k) if stepping else level
        levels[name] = level
        x, y = secondary[name]
        ci = stats.bootstrap(
            (y - x,), np.mean, n_resamples=resamples, method="BCa", rng=np.random.default_rng(0), confidence_level=level
        ).confidence_interval
        stepping = stepping and (ci.low > 0 or ci.high < 0)
    return levels


def holm_by_hand(pvalues: dict[str, float]) -> dict[str, float]:
    """Holm-Bonferroni step-down adjusted p-values."""
    ordered = sorted(pvalues.items(), key=lambda kv: kv[1])
    m, running, adjusted = len(ordered), 0.0, {}
    for rank, (name, p) in enumerate(ordered):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[name] = running
    return adjusted


def expected_stats(
    x: np.ndarray, y: np.ndarray, *, higher_is_better: bool, resamples: int, level: float = 0.95
) -> dict[str, Any]:
    """Every statistic `compare` reports for one score, computed here with scipy and the textbook formulas."""
    d = y - x
    gain = d if higher_is_better else -d
    sd = statistics.stdev(d)
    boot = stats.bootstrap(
        (d,), np.mean, n_resamples=resamples, method="BCa", rng=np.random.default_rng(0), confidence_level=level
    )
    low, high = boot.confidence_interval.low, boot.confidence_interval.high
    if not (math.isfinite(low) and math.isfinite(high)):  # BCa undefined (few items, high level): percentile
        tail = (1 - level) / 2 * 100
        low, high = np.percentile(boot.bootstrap_distribution, [tail, 100 - tail])
    z = NormalDist().inv_cdf(1 - (1 - level) / 2) + NormalDist().inv_cdf(0.8)
    return {
        "n": len(d),
        "mean_a": x.mean(),
        "mean_b": y.mean(),
        "diff": d.mean(),
        "diff_ci_low": low,
        "diff_ci_high": high,
        "wilcoxon_p": stats.wilcoxon(d, zero_method="pratt").pvalue,
        "ttest_p": stats.ttest_rel(y, x).pvalue,
        "cohens_dz": d.mean() / sd,
        "mde": z * sd / math.sqrt(len(d)),
        "wins": int((gain > 0).sum()),
        "ties": int((gain == 0).sum()),
        "losses": int((gain < 0).sum()),
    }


def assert_matches(reported: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    """Every expected statistic equals the reported one (floats to 1e-9 relative)."""
    for key, value in expected.items():
        assert reported[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key


def test_compare_runs_reproduces_scipy_on_every_shared_score(tmp_path: Path) -> None:
    a, b = two_runs(tmp_path / "runs")

    comparison = compare_runs(a, b, resamples=RESAMPLES)

    assert comparison.shared_items == 40
    assert (comparison.a.only_here, comparison.b.only_here) == (3, 2)
    assert set(comparison.scores) == {"quality", "hallucination_count", "noise", "format_ok"}
    assert comparison.skipped_scores == {
        "category": "categorical score: no mean to compare",
        "new_score": "only in run run-b",
    }
    # the gate's metric is primary (95% CI); the rest are secondary: Holm p-values and step-down CI levels
    assert (comparison.primary, next(iter(comparison.scores))) == (["hallucination_count"], "hallucination_count")
    secondary = {name: paired_values(a, b, name) for name in ("quality", "noise", "format_ok")}
    levels = {"hallucination_count": 0.95, **holm_levels_by_hand(secondary, RESAMPLES)}
    wilcoxon = {}
    for name, score in comparison.scores.items():
        x, y = paired_values(a, b, name)
        higher = name != "hallucination_count"
        expected = expected_stats(x, y, higher_is_better=higher, resamples=RESAMPLES, level=levels[name])
        assert_matches(score.stats.to_dict(), expected)
        assert score.stats.ci_level == pytest.approx(levels[name])
        if name != "hallucination_count":
            wilcoxon[name] = stats.wilcoxon(y - x, zero_method="pratt").pvalue
    for name, p in holm_by_hand(wilcoxon).items():
        assert comparison.scores[name].stats.p_adjusted == pytest.approx(p)
    assert comparison.scores["hallucination_count"].stats.p_adjusted is None
    assert comparison.scores["quality"].stats.n == 36
    assert comparison.scores["quality"].shared_unmeasured == 4
    halluc = comparison.scores["hallucination_count"]
    assert (halluc.direction, halluc.direction_source) == ("lower", "gate hallucinations bounds it from above")
    assert {name: s.stats.verdict for name, s in comparison.scores.items()} == {
        "quality": "better",
        "hallucination_count": "better",
        "noise": "inconclusive",
        "format_ok": "better",  # B fixed 7 of the 14 items A failed, and broke none
    }
    assert "[exploratory]" in comparison.scores["quality"].sentence
    assert "Holm-adjusted" in comparison.scores["quality"].sentence


def test_metric_option_chooses_the_primary_metrics_and_an_unknown_one_lists_the_choices(tmp_path: Path) -> None:
    a, b = two_runs(tmp_path / "runs")
    comparison = compare_runs(a, b, metrics=["noise"], directions={"format_ok": "none"}, resamples=300)
    assert (comparison.primary, comparison.primary_source) == (["noise"], "--metric")
    assert comparison.scores["noise"].stats.ci_level == 0.95 and comparison.scores["noise"].primary
    fmt = comparison.scores["format_ok"]
    assert (fmt.direction, fmt.direction_source, fmt.stats.verdict) == ("none", "evaluator file", "increased")
    with pytest.raises(ScoregateError, match=r"--metric names score.*not compared: nope") as raised:
        compare_runs(a, b, metrics=["nope"])
    assert "quality" in (raised.value.hint or "")


def test_margin_turns_a_score_into_a_non_inferiority_test(tmp_path: Path) -> None:
    a, b = two_runs(tmp_path / "runs")

    comparison = compare_runs(a, b, margins={"noise": 5.0, "quality": 0.1}, resamples=500)

    noise = comparison.scores["noise"].stats
    assert (noise.verdict, noise.non_inferior, noise.margin) == ("equivalent", True, 5.0)
    assert "equivalent (margin 5, non-inferior)" in comparison.scores["noise"].sentence
    assert comparison.scores["quality"].stats.verdict == "better"
    tight = compare_runs(a, b, margins={"noise": 0.01}, resamples=500).scores["noise"]
    assert (tight.stats.verdict, tight.stats.non_inferior) == ("inconclusive", False)
    assert tight.sentence.startswith("inconclusive (margin 0.01, non-inferiority not shown)")


def test_caller_can_declare_a_score_lower_is_better(tmp_path: Path) -> None:
    a, b = two_runs(tmp_path / "runs")

    flipped = compare_runs(a, b, lower_is_better=["quality"], resamples=500).scores["quality"]

    assert (flipped.direction, flipped.direction_source, flipped.stats.verdict) == (
        "lower", "given by the caller", "worse",
    )  # fmt: skip


def test_runs_without_a_shared_item_or_a_margin_on_an_unknown_score_are_clear_errors(tmp_path: Path) -> None:
    a = write_run(tmp_path / "runs", "a", {"x": {"quality": 1}})
    b = write_run(tmp_path / "runs", "b", {"y": {"quality": 2}})
    with pytest.raises(ScoregateError, match="share no item id"):
        compare_runs(a, b)
    a, b = two_runs(tmp_path / "other")
    with pytest.raises(ScoregateError, match="not compared: faithfulness") as raised:
        compare_runs(a, b, margins={"faithfulness": 0.2})
    assert "quality" in (raised.value.hint or "")


def test_runs_on_different_setups_are_compared_with_a_warning(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    a = write_run(runs_dir, "a", {f"i{k}": {"quality": k % 5} for k in range(6)})
    other_judge = {"name": "big", "provider": "openai", "model": "judge-2", "endpoint": "http://y"}
    b = write_run(runs_dir, "b", {f"i{k}": {"quality": (k + 1) % 5} for k in range(6)}, judge_model=other_judge)

    comparison = compare_runs(a, b, resamples=200)

    assert comparison.warnings == ["the runs were judged by different models (judge-1 vs judge-2)"]


def per_item_judge(server: ScriptedOpenAI, scores_by_title: Mapping[str, int]) -> None:
    """Judges give each item the score its episode title maps to (default: the highest)."""

    def responder(body: dict[str, Any]) -> str:
        schema = request_schema(body)
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if schema is None or "strict, careful evaluator" not in text:
            return server.default_reply(body)
        score = next((s for title, s in scores_by_title.items() if title in text), None)
        return json.dumps(json_for_schema(schema, score=score))

    server.responder = responder


def smoke_titles(project_dir: Path) -> list[str]:
    """The episode titles of the test project's smoke items, in file order."""
    lines = (project_dir / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["input"]["title"] for line in lines]


def test_cli_compare_of_two_scripted_runs_matches_scipy(
    cli: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs, project_dir: Path
) -> None:
    titles = smoke_titles(project_dir)
    per_item_judge(scripted_server, dict(zip(titles, [2, 3, 1, 2, 4, 3], strict=True)))
    assert cli("run", "smoke", "--no-mlflow", "--no-cache").code == 0
    baseline = runs.latest()
    per_item_judge(scripted_server, dict(zip(titles, [4, 3, 4, 5, 5, 4], strict=True)))
    assert cli("run", "smoke", "--no-mlflow", "--no-cache").code == 0
    candidate = runs.latest()
    assert candidate != baseline

    result = cli("compare", baseline, candidate, "--json", "--no-mlflow")

    assert result.code == 0, result.output
    report = json.loads(result.out)
    assert report["shared_items"] == 6
    store_a, store_b = (RunStore.open(project_dir / "runs", r) for r in (baseline, candidate))
    judged = ("actionability_score", "faithfulness_score", "conciseness_score", "WeightedQuality")
    assert set(judged) <= set(report["scores"])
    wilcoxon = {}
    for name, reported in report["scores"].items():
        x, y = paired_values(store_a, store_b, name)
        higher = reported["direction"] != "lower"
        if np.any(y != x):
            level = reported["ci_level"]
            assert_matches(reported, expected_stats(x, y, higher_is_better=higher, resamples=200, level=level))
            if reported["role"] == "secondary":
                wilcoxon[name] = stats.wilcoxon(y - x, zero_method="pratt").pvalue
        else:
            assert (reported["diff"], reported["wilcoxon_p"], reported["verdict"]) == (0, None, "no change")
    for name, p in holm_by_hand(wilcoxon).items():
        assert report["scores"][name]["p_adjusted"] == pytest.approx(p)
    # the smoke experiment's gates name its primary metrics; word_count has no direction (counters_v1)
    assert "WeightedQuality" in report["primary"] and report["scores"]["WeightedQuality"]["role"] == "primary"
    assert report["scores"]["word_count"]["direction"] == "none"
    assert report["scores"]["hallucination_count"]["direction"] == "lower"
    assert report["scores"]["faithfulness_score"]["diff"] == pytest.approx(np.mean([2, 0, 3, 3, 1, 1]))


def test_cli_compare_prints_a_table_with_counts_and_verdicts(cli: Callable[..., CliResult], project_dir: Path) -> None:
    a, b = two_runs(project_dir / "runs")

    result = cli("compare", a.run_id, b.run_id, "--no-mlflow", "--margin", "noise=5")

    assert result.code == 0, result.output
    assert "paired on 40 items present in both runs; dropped 3 only in A (run-a), 2 only in B (run-b)" in result.output
    assert "quality: B is better: +" in result.output
    assert "noise: equivalent (margin 5, non-inferior)" in result.output
    assert "hallucination_count ↓" in result.output
    assert "not compared: category (categorical score: no mean to compare)" in result.output
    # each run once, with its prompt versions once and its own item count
    assert "A: scripted · summarization-catchup@1 (run-a) · 43 items" in result.output
    assert "B: scripted · summarization-catchup@1 (run-b) · 42 items" in result.output
    assert result.output.count("summarization-catchup@1") == 2
    assert "the runs cover different items: every mean, Δ and test below is over the 40 paired items" in result.output
    # the jargon of the tests table is explained
    assert "W/T/L: items where B wins / ties / loses against A" in result.output
    assert "MDE: minimum detectable effect, the smallest Δ these n items would detect" in result.output
    assert "dz: Cohen's dz" in result.output


def outcome_with_large_values(runs_dir: Path) -> CompareOutcome:
    """A comparison whose scores run into the hundreds (a word count without direction, a quality score)."""
    rng = np.random.default_rng(3)
    words_a, words_b = rng.integers(50, 900, size=12), rng.integers(50, 900, size=12)
    a = write_run(runs_dir, "wa", {f"i{k}": {"word_count": int(words_a[k]), "quality": k % 5} for k in range(12)})
    b = write_run(runs_dir, "wb", {f"i{k}": {"word_count": int(words_b[k]), "quality": (k + 2) % 5} for k in range(12)})
    return CompareOutcome(compare_runs(a, b, directions={"word_count": "none"}, resamples=200))


def test_tests_lines_keep_each_value_beside_its_label_at_80_columns(tmp_path: Path) -> None:
    outcome = outcome_with_large_values(tmp_path / "runs")
    assert outcome.comparison.scores["word_count"].stats.mde > 100  # type: ignore[operator]

    lines = compare_cmd.tests_lines(outcome, width=80)

    assert lines and all(cell_len(line) <= 80 for line in lines)
    labels = ("p Wilcoxon", "p t-test", "p Holm", "dz", "W/T/L", "MDE")
    assert not [line for line in lines if line.rstrip().endswith(labels)]  # no label left without its value
    assert "e+" not in "\n".join(lines)  # 127, not 1.27e+02
    text = " ".join(" ".join(lines).split())
    quality = outcome.comparison.scores["quality"].stats
    assert f"W/T/L {quality.wins}/{quality.ties}/{quality.losses}" in text
    word_count = text.split("word_count", 1)[1].split("quality", 1)[0]
    assert "W/T/L —" in word_count  # no direction: a win needs one
    assert all(cell_len(line) <= 80 for line in compare_cmd.comparison_lines(outcome, width=80))


def test_identical_scores_read_no_change_with_no_test_and_no_mde(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    a = write_run(runs_dir, "same-a", {f"i{k}": {"quality": k % 5, "noise": k} for k in range(5)})
    b = write_run(runs_dir, "same-b", {f"i{k}": {"quality": k % 5, "noise": k + k % 2} for k in range(5)})

    comparison = compare_runs(a, b, resamples=200)

    quality = comparison.scores["quality"]
    assert (quality.stats.verdict, quality.stats.mde, quality.stats.diff_ci_low) == ("no change", None, 0.0)
    assert (
        quality.sentence == "no change: every one of the 5 paired items scored the same in both runs (nothing to test)"
    )
    assert "cannot compare" not in quality.sentence
    assert list(compare_cmd.tested(CompareOutcome(comparison))) == ["noise"]
    assert compare_cmd.unchanged(CompareOutcome(comparison)) == ["quality"]


def test_equal_nonzero_differences_keep_their_verdict_and_say_why_tests_are_missing(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    a = write_run(runs_dir, "step-a", {f"i{k}": {"quality": k % 4} for k in range(6)})
    b = write_run(runs_dir, "step-b", {f"i{k}": {"quality": k % 4 + 1} for k in range(6)})

    quality = compare_runs(a, b, metrics=["quality"], resamples=200).scores["quality"]

    assert (quality.stats.verdict, quality.stats.mde) == ("better", None)
    assert quality.sentence.startswith("B is better: +1 (B − A; 95% CI +1 to +1)")
    assert "every item changed by exactly +1, so the t-test, dz and MDE are undefined" in quality.sentence


def test_the_comparison_report_gives_each_runs_item_count_and_warns_when_they_differ(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    dataset = {"name": "hardcases", "content_hash": DATASET_HASH, "items": 6}
    a = write_run(runs_dir, "full", {f"i{k}": {"quality": k % 5, "length": 100 + k} for k in range(6)}, dataset=dataset)
    b_scores = {f"i{k}": {"quality": (k + 1) % 5, "length": 90 + 7 * k} for k in range(3)}
    b = write_run(runs_dir, "limited", b_scores, dataset=dataset, options={"limit": 3})

    page = render_page(build_report([a, b], ReportOptions(resamples=200, directions={"length": "none"})))

    assert "<dt>items in this run</dt><dd>6</dd>" in page
    assert "<dt>items in this run</dt><dd>3 of 6 (--limit 3)</dd>" in page
    assert "<dd>hardcases (6 items) · hash" in page
    assert 'id="item-sets"' in page and "the Comparison section&#x27;s means are over the 3 items both" in page
    cells = {
        name: wtl
        for name, wtl in re.findall(
            r"<tr><td>(\w+) [^<]*(?:<span[^>]*>[^<]*</span>)?</td>.*?<td>([^<]*)</td></tr>", page
        )
    }
    assert cells["length"] == "—" and re.fullmatch(r"\d+/\d+/\d+", cells["quality"])
    same = render_page(build_report([a, write_run(runs_dir, "full-2", {f"i{k}": {"quality": 1} for k in range(6)},
                                                  dataset=dataset)], ReportOptions(resamples=200)))  # fmt: skip
    assert 'id="item-sets"' not in same


def test_cli_compare_rejects_bad_input_with_clear_messages(cli: Callable[..., CliResult], project_dir: Path) -> None:
    a, b = two_runs(project_dir / "runs")

    bad_margin = cli("compare", a.run_id, b.run_id, "--no-mlflow", "--margin", "quality")
    unknown_run = cli("compare", a.run_id, "nope", "--no-mlflow")
    unknown_score = cli("compare", a.run_id, b.run_id, "--no-mlflow", "--margin", "nope=0.2")

    assert bad_margin.code == ExitCode.ERROR
    assert "--margin 'quality' is not SCORE=VALUE" in bad_margin.output
    assert unknown_run.code == ExitCode.ERROR
    assert "no run 'nope'" in unknown_run.output
    assert unknown_score.code == ExitCode.ERROR
    assert "not compared: nope" in unknown_score.output


def test_compare_is_mirrored_to_an_mlflow_comparison_run_linked_to_both_runs(
    cli: Callable[..., CliResult], project_dir: Path, mlflow_store: str
) -> None:
    from mlflow.tracking import MlflowClient

    a, b = small_runs(project_dir / "runs")

    first = cli("compare", a.run_id, b.run_id, "--json")
    again = cli("compare", a.run_id, b.run_id, "--json")

    assert first.code == 0 and again.code == 0, first.output + again.output
    report = json.loads(first.out)
    client = MlflowClient(tracking_uri=mlflow_store)
    experiment = client.get_experiment_by_name("comparisons (compare-test)")
    assert experiment is not None
    (run,) = client.search_runs([experiment.experiment_id])  # the second compare updated it, no duplicate
    assert run.info.run_id == report["mlflow_run_id"] == json.loads(again.out)["mlflow_run_id"]
    quality = report["scores"]["quality"]
    for stat in ("diff", "diff_ci_low", "diff_ci_high", "wilcoxon_p", "ttest_p", "cohens_dz", "mde", "n"):
        assert run.data.metrics[f"quality_{stat}"] == pytest.approx(quality[stat])
    assert run.data.metrics["quality_p_holm"] == pytest.approx(quality["p_adjusted"])
    assert run.data.tags["verdict.quality"] == quality["verdict"]
    assert (run.data.tags["scoregate.run_a"], run.data.tags["scoregate.run_b"]) == ("small-a", "small-b")
    for store, other in ((a, "small-b"), (b, "small-a")):
        linked = client.get_run(store.links["mlflow_run_id"])
        role = "A" if store is a else "B"
        assert linked.data.tags[f"compare.{other}"].startswith(f"run {role} of comparison {run.info.run_id}")
        assert run.data.tags[f"mlflow_run_{'a' if store is a else 'b'}"] == linked.info.run_id


def test_per_item_scores_become_mlflow_evaluation_rows_replayed_offline(
    project_dir: Path, mlflow_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import mlflow
    from mlflow.tracking import MlflowClient

    from scoregate.sinks.mlflow.compare import log_evaluation_rows

    _, b = small_runs(project_dir / "runs")

    assert log_evaluation_rows(b, project_root=project_dir) == 6
    assert log_evaluation_rows(b, project_root=project_dir) == 6  # logged again: replaced, not duplicated
    assert capsys.readouterr().out == ""  # MLflow's banner goes to stderr: `compare --json` output stays JSON
    assert mlflow.active_run() is None
    assert "MLFLOW_EXPERIMENT_ID" not in os.environ  # no process-wide MLflow state leaks to the caller

    client = MlflowClient(tracking_uri=mlflow_store)
    run = client.get_run(b.links["mlflow_run_id"])
    assert run.info.status == "FINISHED"
    traces = mlflow.search_traces(locations=[run.info.experiment_id], run_id=run.info.run_id, return_type="list")
    assert len(traces) == 6
    stored = {r.item_id: {s.name: s for s in r.scores} for r in b.iter_results()}
    for trace in traces:
        item_id = json.loads(trace.data.request)["item_id"]
        assessments = {x.name: x for x in trace.info.assessments}
        quality = stored[item_id]["quality"]
        if quality.value is None:
            assert assessments["quality"].error.error_message == "judge reply is not JSON"
        else:
            assert assessments["quality"].value == quality.value
        assert assessments["category"].value == "tools"
    assert run.data.metrics["quality/mean"] == pytest.approx(3.0)  # MLflow's own mean of the replayed values


OTHER_MODEL = {"name": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini", "endpoint": "http://y"}
DIFF_SETUPS = [
    ("model", {"model": OTHER_MODEL}, ("A scripted", "B gpt-4o-mini")),
    ("prompt", {"prompt": "summarization-catchup@2", "prompts": {"summarization-catchup": {"version": "2"}}},
     ("A summarization-catchup@1", "B summarization-catchup@2")),
    ("experiment", {"experiment": "smoke"}, ("A experiment hardcases", "B experiment smoke")),
]  # fmt: skip


@pytest.mark.parametrize(("setup", "expected"), [row[1:] for row in DIFF_SETUPS], ids=[row[0] for row in DIFF_SETUPS])
def test_diff_heads_its_columns_with_what_differs_between_the_runs(
    setup: dict[str, Any],
    expected: tuple[str, str],
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    a = write_run(project_dir / "runs", "run-a", {"i1": {"quality": 2}}, outputs={"i1": "short"})
    b = write_run(project_dir / "runs", "run-b", {"i1": {"quality": 4}}, outputs={"i1": "longer"}, **setup)

    result = scoregate("diff", a.run_id, b.run_id)
    heads = json.loads(scoregate("diff", a.run_id, b.run_id, "--json").out)["items"][0]

    assert result.code == 0, result.output
    head_a, head_b = expected
    assert re.search(rf"┃ {re.escape(head_a)} +┃ {re.escape(head_b)} +┃", result.out), result.out
    assert (heads["label_a"], heads["label_b"]) == (head_a[2:], head_b[2:])
    if setup.get("prompt") is None:  # the same prompt in both runs: it tells them apart in no heading
        assert "summarization-catchup@1" not in result.out
