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

from scoregate.cli.render import gate_rule
from scoregate.store.record import GateResult, RunSummary
from support.projects import Runs
from support.scripted_openai import ScriptedOpenAI

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
        rule = gate_rule(GateResult.model_validate(gate))
        assert any(rule in line for line in lines), rule
        assert any(gate["name"] in line for line in lines), gate["name"]
    assert "…" not in out
    assert long_lines(out, str(runs.root)) == []
    assert f"stored in {runs.root / run_id}" in out  # the path on one line
    assert re.search(r"latency p50/p95 \d+(\.\d)? ms/\d+(\.\d)? ms", out)
    assert "success 100%" in out
    assert re.search(r"^  6/6 items · [\d.]+ items/s · 0 failed · elapsed [\d.]+ s · ETA 0\.0 s$", out, re.M)
    assert "e+0" not in out and "INFO" not in out
    assert "verdict: PASS" in out
    words = " ".join(out.split())
    assert "observed: the statistic each rule reads over the measured items; for every_item, the worst item" in words


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
    assert f"scripted ({a})" in out and f"scripted ({b})" in out


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
    assert "cannot compare" not in outside_the_rule  # the rule defines the words; no score reads either
    for internal in ("wilcoxon_p", "cohens_dz", "MDE 0", "tests (shown"):
        assert internal not in out, internal  # nothing to test: no table of blanks, no field names
    header = out.split("primary:")[0].splitlines()
    openers = ("paired on", "A: ", "B: ", "the runs cover")
    assert all(line.startswith(openers) or line.startswith("  ") for line in header), header  # continuations indented


def identifiers(out: str) -> list[str]:
    """Every `prompt@version` identifier printed (a cut one shows as two fragments, neither of them whole)."""
    return re.findall(r"[\w.-]+@[\w.-]+", out)


def test_a_run_answered_from_the_cache_says_so_whole_at_80_columns(
    narrow: Path, start_scoregate: Start, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    from scoregate.cli.render import run_metrics_fields

    assert finish(start_scoregate("run", "smoke", "--limit", "3", "--no-mlflow", "--no-langfuse"))[0] == 0
    code, out = finish(start_scoregate("run", "smoke", "--limit", "3", "--no-mlflow", "--no-langfuse"))

    assert code == 0, out
    summary = runs.summary(runs.latest())
    lines = out.splitlines()
    fields = run_metrics_fields(RunSummary.model_validate(summary))
    for field in fields:  # label and value on one line: never `cost` / `$0.0000`
        assert any(field in line for line in lines), (field, out)
    assert "cached 3/3 task calls (12/12 calls in all)" in out
    assert "latency not measured (every task call was cached)" in out and "(all cached, not spent)" in out
    start = next(i for i, line in enumerate(lines) if line.startswith("items 3  "))
    assert lines[start + 1].startswith("  ")  # the continuation of the run-metrics line is indented
    name = f"{summary['model']} · " + ", ".join(f"{n}@{v}" for n, v in summary["prompts"].items())
    assert f"{name}  on smoke_v1" in " ".join(line.strip() for line in lines)
    prompt_ids = [f"{n}@{v}" for n, v in summary["prompts"].items()]
    for line in lines:
        if any(line.lstrip().startswith(p) for p in prompt_ids[1:]):
            assert line.startswith("  "), line  # a wrapped name goes on indented, never at column 0
    assert set(prompt_ids) <= set(identifiers(out))
    assert long_lines(out, str(runs.root)) == []


def test_leaderboard_runs_list_and_experiments_at_80_columns_cut_no_identifier(
    narrow: Path, start_scoregate: Start, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    for limit in ("2", "2"):
        assert finish(start_scoregate("run", "counters", "--limit", limit, "--no-mlflow", "--no-langfuse"))[0] == 0
    prompts = runs.summary(runs.latest())["prompts"]
    prompt_ids = {f"{n}@{v}" for n, v in prompts.items()}

    code, out = finish(start_scoregate("leaderboard"))
    assert code == 0, out
    assert set(identifiers(out)) == prompt_ids  # each whole; no fragment like `…@loc` / `al-86aff890`
    assert long_lines(out, str(runs.root)) == [] and "…" not in out
    assert "tokens spent" in out and "answered from the response cache are not counted as spent" in out

    code, out = finish(start_scoregate("runs", "list"))
    assert code == 0, out
    assert set(identifiers(out)) == prompt_ids and long_lines(out, str(runs.root)) == []
    assert out.count("2 of 6 items (--limit 2)") == 2
    assert all(line.startswith(("counters-", "  ")) for line in out.splitlines() if line), out

    code, out = finish(start_scoregate("run"))
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith("experiments in scoregate.yaml") and all(line.startswith("  ") for line in lines[1:])
    assert "1 evaluator," in out and "1 evaluators" not in out and long_lines(out, "") == []


def test_no_printed_line_ends_in_spaces_in_a_log(
    narrow: Path, start_scoregate: Start, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    """Rich pads a table's title (and a cell) to the table's width: a log or a diff of two logs shows the spaces."""
    outputs = {}
    for _ in range(2):
        code, outputs["run"] = finish(start_scoregate("run", "smoke", "--no-mlflow", "--no-langfuse"))
        assert code == 0, outputs["run"]
    a, b = runs.ids()
    commands = {
        "runs list": ("runs", "list"), "runs show": ("runs", "show", b), "compare": ("compare", a, b, "--no-mlflow"),
        "rank": ("rank", a, b), "diff": ("diff", a, b), "leaderboard": ("leaderboard",),
        "runs show --items": ("runs", "show", b, "--items"),
    }  # fmt: skip
    for name, args in commands.items():
        code, outputs[name] = finish(start_scoregate(*args))
        assert code == 0, outputs[name]

    padded = {name: [line for line in out.splitlines() if line.endswith(" ")] for name, out in outputs.items()}
    assert {name: lines for name, lines in padded.items() if lines} == {}
