"""Output read in CI logs: the real executable, COLUMNS=80, stdout a pipe (no TTY). Nothing a reader needs is cut."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from rich.cells import cell_len

from conftest import Runs
from scoregate.cli.render import gate_rule
from scripted_openai import ScriptedOpenAI

Start = Callable[..., "subprocess.Popen[str]"]


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    out, err = process.communicate(timeout=300)
    return process.returncode, out + err


def long_lines(text: str, allowed: str) -> list[str]:
    """Lines wider than 80 cells, except those holding `allowed` (a path is never broken, so it may overflow)."""
    return [line for line in text.splitlines() if cell_len(line) > 80 and allowed not in line]


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch, project_dir: Path) -> Path:
    """An 80-column environment, and a `nogates` experiment beside the test project's own."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("MLFLOW_LOGGING_LEVEL", raising=False)
    path = project_dir / "scoregate.yaml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    config["experiments"]["nogates"] = {**config["experiments"]["counters"], "gates": []}
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return project_dir


def test_run_at_80_columns_without_a_tty_cuts_no_score_key_or_gate_rule(
    narrow: Path, start_scoregate: Start, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    code, out = finish(start_scoregate("run", "smoke", "--no-langfuse"))  # MLflow on: its first use creates the db

    assert code == 0, out
    run_id = runs.latest()
    summary = runs.summary(run_id)
    lines = out.splitlines()
    for key in summary["scores"]:
        assert any(re.search(rf"(^|\s){re.escape(key)}(\s|$)", line) for line in lines), key
    for gate in summary["gates"]:
        assert any(gate_rule(gate) in line for line in lines), gate_rule(gate)
        assert any(gate["name"] in line for line in lines), gate["name"]
    assert "…" not in out
    assert long_lines(out, str(runs.root)) == []
    assert f"stored in {runs.root / run_id}" in out  # the path on one line
    assert re.search(r"latency p50/p95 \d+(\.\d)? ms/\d+(\.\d)? ms", out)
    assert "success 100%" in out
    assert re.search(r"^  6/6 items · [\d.]+ items/s · 0 failed · elapsed [\d.]+ s · ETA 0\.0 s$", out, re.M)
    assert "e+0" not in out and "INFO" not in out
    assert "verdict: PASS" in out


def test_a_run_without_gates_says_so_quietly(
    narrow: Path, start_scoregate: Start, scripted_server: ScriptedOpenAI
) -> None:
    code, out = finish(start_scoregate("run", "nogates", "--no-mlflow", "--no-langfuse"))

    assert code == 0, out
    assert "verdict: no gates" in out and "NO_GATES" not in out


def test_compare_and_rank_at_80_columns_cut_nothing(
    narrow: Path, start_scoregate: Start, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    for _ in range(2):
        assert finish(start_scoregate("run", "smoke", "--no-mlflow", "--no-langfuse"))[0] == 0
    a, b = sorted(runs.ids(), key=lambda r: runs.manifest(r)["started_at"])
    keys = [k for k, s in runs.summary(b)["scores"].items() if s["data_type"] in ("numeric", "boolean")]

    code, out = finish(start_scoregate("compare", a, b, "--no-mlflow"))
    assert code == 0, out
    for key in keys:
        assert re.search(rf"^{re.escape(key)} [↑↓·] ", out, re.MULTILINE) or f"│ {key} " in out, key
    assert "…" not in out and long_lines(out, str(runs.root)) == []

    code, out = finish(start_scoregate("rank", a, b))
    assert code == 0, out
    assert "…" not in out and long_lines(out, str(runs.root)) == []
    assert f"scripted@{a}" in out and f"scripted@{b}" in out


def test_compare_of_a_run_and_its_cached_limited_rerun_says_no_change_once(
    narrow: Path, start_scoregate: Start, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    assert finish(start_scoregate("run", "smoke", "--no-mlflow", "--no-langfuse"))[0] == 0
    a = runs.latest()
    assert finish(start_scoregate("run", "smoke", "--no-mlflow", "--no-langfuse", "--limit", "3"))[0] == 0
    b = runs.latest()
    prompts = runs.manifest(a)["receipts"]["prompts"]

    code, out = finish(start_scoregate("compare", a, b, "--no-mlflow"))

    assert code == 0, out
    assert "…" not in out and long_lines(out, str(runs.root)) == []
    words = " ".join(out.split())  # console wrapping never splits a phrase here
    for name, info in prompts.items():  # once per run, not twice
        assert words.count(f"{name}@{info['version']}") == 2, name
    assert f"({a}) · 6 items" in words and f"({b}) · 3 items (--limit 3)" in words
    assert "every mean, Δ and test below is over the 3 paired items" in words
    compared = json.loads(start_scoregate("compare", a, b, "--no-mlflow", "--json").communicate(timeout=300)[0])
    assert compared["run_b"]["limit"] == 3 and compared["run_a"]["limit"] is None
    scores = compared["scores"]
    assert {s["verdict"] for s in scores.values()} == {"no change"}
    assert all(s["mde"] is None and "mde" in s["reason"] for s in scores.values())
    for key in scores:
        assert re.search(rf"^{re.escape(key)} [↑↓·]  no change( \*)?$", out, re.MULTILINE) or f"│ {key} " in out
    assert f"no change in all {len(scores)} scores — every paired item scored the same in both runs" in words
    outside_the_rule = words.split("rule:")[0] + words.split("adjusted CI the same way.")[1]
    assert "inconclusive" not in outside_the_rule
    for internal in ("cannot compare", "wilcoxon_p", "cohens_dz", "MDE 0", "tests (shown"):
        assert internal not in out, internal  # nothing to test: no table of blanks, no field names
