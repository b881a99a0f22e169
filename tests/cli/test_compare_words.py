"""The words of comparisons and item views: "cannot compare" when nothing was paired, one Holm family for a
secondary score's p-value and CI, `--worst` by a continuous metric, and micro vs per-item extraction values."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from support.compare_runs import write_run
from support.projects import CliResult, Runs
from support.report_runs import extraction_runs
from support.scripted_openai import ScriptedOpenAI


def test_a_score_with_no_paired_item_cannot_be_compared_in_every_output(
    scoregate: Callable[..., CliResult], project_dir: Path, tmp_path: Path
) -> None:
    runs_dir = project_dir / "runs"
    a = {f"i{k}": {"quality": k % 5, "rare": 3.0 if k < 5 else None} for k in range(20)}
    b = {f"i{k}": {"quality": (k + 1) % 5, "rare": 4.0 if k >= 5 else None} for k in range(20)}  # never both
    write_run(runs_dir, "run-a", a), write_run(runs_dir, "run-b", b)

    as_json = scoregate("compare", "run-a", "run-b", "--no-mlflow", "--json")
    shown = scoregate("compare", "run-a", "run-b", "--no-mlflow")

    assert as_json.code == 0 and shown.code == 0, shown.output
    rare = json.loads(as_json.out)["scores"]["rare"]
    assert (rare["n"], rare["verdict"]) == (0, "cannot compare")
    assert rare["sentence"].startswith("cannot compare: 0 paired items")
    assert re.search(r"rare\b.*cannot compare", shown.out), shown.out
    assert "inconclusive" not in next(line for line in shown.out.splitlines() if "rare" in line)
    page = (runs_dir / "run-b" / "compare-run-a.html").read_text(encoding="utf-8")
    cell = re.search(r"<tr><td>rare [^<]*</td><td[^>]*>([^<]*)</td>", page)
    assert cell is not None and cell.group(1) == "cannot compare"


def test_a_secondary_scores_p_adjusted_and_ci_level_come_from_one_holm_family(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    rng = np.random.default_rng(11)
    a: dict[str, dict[str, Any]] = {}
    b: dict[str, dict[str, Any]] = {}
    for k in range(30):
        # hallucination_count is the gated (primary) score; s0..s4 differ between runs, same0/same1 do not
        a[f"i{k}"] = {"hallucination_count": int(rng.integers(0, 3)), "same0": 2, "same1": 1}
        b[f"i{k}"] = {"hallucination_count": int(rng.integers(0, 3)), "same0": 2, "same1": 1}
        for s in range(5):
            base = int(rng.integers(1, 6))
            a[f"i{k}"][f"s{s}"] = base
            b[f"i{k}"][f"s{s}"] = min(5, base + int(rng.choice([0, 0, 1, s % 3])))
    write_run(project_dir / "runs", "run-a", a), write_run(project_dir / "runs", "run-b", b)

    result = scoregate("compare", "run-a", "run-b", "--no-mlflow", "--json")

    assert result.code == 0, result.output
    scores = json.loads(result.out)["scores"]
    secondary = {n: s for n, s in scores.items() if s["role"] == "secondary"}
    family = {n: s for n, s in secondary.items() if s["wilcoxon_p"] is not None}
    assert set(secondary) - set(family) == {"same0", "same1"} and len(family) == 5
    m, alpha = len(family), 0.05
    ranked = sorted(family, key=lambda n: family[n]["wilcoxon_p"])
    running = 0.0
    for k, name in enumerate(ranked):  # Holm over the family: the same m for p_adjusted and the CI levels
        running = max(running, min(1.0, (m - k) * family[name]["wilcoxon_p"]))
        assert family[name]["p_adjusted"] == running
    assert family[ranked[0]]["ci_level"] == 1 - alpha / m  # the first step is 1 − α/m, not 1 − α/7
    assert all(1 - alpha <= s["ci_level"] <= 1 - alpha / m for s in family.values())
    for name in ("same0", "same1"):
        assert (secondary[name]["p_adjusted"], secondary[name]["ci_level"]) == (None, 1 - alpha)


def test_worst_items_default_to_the_first_continuous_gated_score(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    assert scoregate("run", "smoke", "--no-mlflow").code == 0
    gates = [g["metric"] for g in runs.manifest()["receipts"]["gates"]]
    assert gates[:3] == ["required_sections_present", "tldr_within_cap", "faithfulness_score"]  # 0/1, 0/1, 1-5

    worst = scoregate("runs", "show", runs.latest(), "--worst", "3", "--json")
    shown = scoregate("runs", "show", runs.latest(), "--worst", "3")

    assert worst.code == 0, worst.output
    assert json.loads(worst.out)["selection"] == "worst 3 by faithfulness_score (higher is better)"
    assert "worst 3 by faithfulness_score" in shown.output


def test_extraction_values_say_whether_they_are_micro_or_per_item_means(
    tmp_path: Path, scripted_server: ScriptedOpenAI, scoregate: Callable[..., CliResult]
) -> None:
    outcomes = extraction_runs(tmp_path / "x", scripted_server)
    project = tmp_path / "x"
    ids = [o.run_id for o in outcomes]

    ranked = scoregate("rank", *ids, project=project)
    scoregate("report", *ids, "-o", str(tmp_path / "page.html"), project=project)

    assert ranked.code == 0, ranked.output
    assert "field_f1_partial (mean of per-item values)" in ranked.output
    assert "extraction.field_f1_partial (micro: pooled over all fields)" in ranked.output
    assert "extraction.eqs (mean of per-item values)" in ranked.output
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "<th>field_f1_partial (micro: pooled over all fields)</th>" in page
    assert "<th>hallucination_rate (micro: pooled over all fields)</th>" in page
    assert "<th>eqs (mean of per-item values)</th>" in page
