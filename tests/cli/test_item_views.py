"""Per-item views on runs made through the scripted server: `runs show --items/--item`, gate breakers, `diff`."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.items import word_diff
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, json_for_schema, request_schema

JUDGE_MARK = "strict, careful evaluator"


def script(server: ScriptedOpenAI, *, hallucinations: Mapping[str, int], scores: Mapping[str, int],
           extra_text: Mapping[str, str] | None = None) -> None:  # fmt: skip
    """Judges answer per episode title (a score and a hallucination count); summaries may get extra text."""

    def responder(body: dict[str, Any]) -> str:
        schema = request_schema(body)
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if schema is None or JUDGE_MARK not in text:
            reply = server.default_reply(body)
            for title, extra in (extra_text or {}).items():
                if title in text:
                    reply += f"\n\n{extra}"
            return reply
        score = next((s for t, s in scores.items() if t in text), None)
        count = next((c for t, c in hallucinations.items() if t in text), 0)
        return json.dumps(json_for_schema(schema, score=score, count=count))

    server.responder = responder


def titles(project_dir: Path) -> list[str]:
    lines = (project_dir / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["input"]["title"] for line in lines]


def item_ids(runs: Runs, run_id: str) -> dict[str, str]:
    """Episode title → item id."""
    return {r["input"]["title"]: r["item_id"] for r in runs.results(run_id)}


@pytest.fixture
def gated_run(scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs,
              project_dir: Path) -> tuple[str, list[str]]:  # fmt: skip
    """A smoke run where the 2nd and 5th items have 3 hallucinations each; returns (run id, breaking item ids)."""
    t = titles(project_dir)
    script(scripted_server, hallucinations={t[1]: 3, t[4]: 3}, scores=dict(zip(t, [5, 2, 4, 3, 1, 5], strict=True)))
    assert scoregate("run", "smoke", "--no-mlflow", "--no-cache").code == 0
    run_id = runs.latest()
    ids = item_ids(runs, run_id)
    return run_id, [ids[t[1]], ids[t[4]]]


def test_an_every_item_gate_names_the_items_that_broke_it(
    gated_run: tuple[str, list[str]], runs: Runs, scoregate: Callable[..., CliResult]
) -> None:
    run_id, breaking = gated_run
    gate = next(g for g in runs.summary(run_id)["gates"] if g["name"] == "hallucinations_per_summary")
    order = [r["item_id"] for r in sorted(runs.results(run_id), key=lambda r: r["index"])]
    expected = sorted(breaking, key=order.index)
    assert gate["status"] == "fail" and gate["failing_items"] == expected
    assert gate["detail"] == f"2 of 6 items break <= 1: {', '.join(expected)}"
    shown = scoregate("runs", "show", run_id)
    assert f"2 of 6 items break <= 1: {', '.join(expected)}" in shown.output


def test_gate_breakers_reach_mlflow_and_the_langfuse_gate_score(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs, project_dir: Path
) -> None:
    from mlflow.tracking import MlflowClient

    from scoregate.sinks.langfuse.score_mapping import run_scores
    from scoregate.sinks.mlflow.client import tracking_uri
    from scoregate.store.record import RunSummary

    t = titles(project_dir)
    script(scripted_server, hallucinations={t[2]: 2}, scores={})
    assert scoregate("run", "smoke", "--no-langfuse", "--no-cache").code == 0
    run_id = runs.latest()
    item = item_ids(runs, run_id)[t[2]]
    mlflow_run = json.loads((project_dir / "runs" / run_id / "links.json").read_text())["mlflow_run_id"]
    mirrored = MlflowClient(tracking_uri(project_dir)).get_run(mlflow_run)
    tags = mirrored.data.tags
    prompts = runs.summary(run_id)["prompts"]
    versions, names = ", ".join(f"@{v}" for v in prompts.values()), ", ".join(prompts)
    assert mirrored.info.run_name == f"scripted · {versions} · {names} · {run_id}"  # model, versions, prompts, id
    assert tags["mlflow.note.content"].startswith("### smoke · scripted (`scripted-1`)")
    assert (
        f"run `{run_id}`" in tags["mlflow.note.content"]
        and "dataset `smoke_v1` (6 items" in tags["mlflow.note.content"]
    )
    assert f"- gate hallucinations_per_summary fail: 1 of 6 items break <= 1: {item}" in tags["mlflow.note.content"]
    assert tags["gate.hallucinations_per_summary.detail"] == f"1 of 6 items break <= 1: {item}"
    posts = {p.name: p for p in run_scores(RunSummary.model_validate(runs.summary(run_id)), mlflow_run)}
    assert posts["gate.hallucinations_per_summary"].comment == f"1 of 6 items break <= 1: {item}"


def test_runs_show_items_lists_every_item_with_every_score(
    gated_run: tuple[str, list[str]], runs: Runs, scoregate: Callable[..., CliResult]
) -> None:
    run_id, _ = gated_run
    result = scoregate("runs", "show", run_id, "--items")
    assert result.code == 0, result.output
    for row in runs.results(run_id):
        assert row["item_id"] in result.output and row["prompt"] in result.output
    for key in ("faithfulness_score", "hallucination_count", "required_sections_present", "WeightedQuality"):
        assert key in result.out
    assert "6 item(s)" in result.output

    table = json.loads(scoregate("runs", "show", run_id, "--items", "--json").out)
    assert len(table["rows"]) == 6 and "hallucination_count" in table["keys"]
    first = table["rows"][0]
    assert set(first) == {"item_id", "index", "prompt", "output_excerpt", "scores", "error"}
    assert first["output_excerpt"].startswith("## TL;DR")


def test_runs_show_compact_prints_one_line_per_item_and_says_the_count_on_stderr(
    gated_run: tuple[str, list[str]], runs: Runs, scoregate: Callable[..., CliResult]
) -> None:
    run_id, breaking = gated_run

    result = scoregate("runs", "show", run_id, "--compact")

    assert result.code == 0, result.output
    lines = result.out.splitlines()
    stored = runs.results(run_id)
    assert [line.split("  ")[0] for line in lines] == [r["item_id"] for r in sorted(stored, key=lambda r: r["index"])]
    first = next(r for r in stored if r["index"] == 0)
    faithfulness = next(s["value"] for s in first["scores"] if s["name"] == "faithfulness_score")
    assert lines[0].split("  ")[1] == "ok" and f"  faithfulness_score {faithfulness:g}" in lines[0]
    assert "6 item(s)" in result.err and "item(s)" not in result.out  # `| wc -l` counts the items alone
    gate = scoregate("runs", "show", run_id, "--gate", "hallucinations_per_summary", "--compact")
    assert sorted(line.split("  ")[0] for line in gate.out.splitlines()) == sorted(breaking)
    assert "2 item(s) broke gate hallucinations_per_summary" in gate.err
    none = scoregate("runs", "show", run_id, "--failed", "--compact")
    assert none.code == 0 and none.out == "" and f"no failed items in run {run_id}" in none.output


def test_worst_by_a_score_failed_and_gate_breakers(
    gated_run: tuple[str, list[str]], runs: Runs, scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    run_id, breaking = gated_run
    worst = json.loads(scoregate("runs", "show", run_id, "--worst", "2", "--by", "faithfulness_score", "--json").out)
    values = [r["scores"]["faithfulness_score"] for r in worst["rows"]]
    assert values == [1.0, 2.0] and worst["selection"] == "worst 2 by faithfulness_score (higher is better)"
    # lower is better for hallucination_count (evaluator file): the worst are the highest counts
    worst_h = json.loads(scoregate("runs", "show", run_id, "--worst", "2", "--by", "hallucination_count", "--json").out)
    assert sorted(r["item_id"] for r in worst_h["rows"]) == sorted(breaking)

    gate = json.loads(scoregate("runs", "show", run_id, "--gate", "hallucinations_per_summary", "--json").out)
    assert sorted(r["item_id"] for r in gate["rows"]) == sorted(breaking)
    assert gate["notes"] == ["2 item(s) broke gate hallucinations_per_summary (hallucination_count <= 1 on every item)"]
    text = scoregate("runs", "show", run_id, "--gate", "hallucinations_per_summary")
    assert all(item in text.output for item in breaking) and "2 item(s)" in text.output

    failed = json.loads(scoregate("runs", "show", run_id, "--failed", "--json").out)
    assert failed["rows"] == []
    none_failed = scoregate("runs", "show", run_id, "--failed")
    assert none_failed.code == 0 and f"no failed items in run {run_id}" in none_failed.output
    assert "┏" not in none_failed.out and "item(s)" not in none_failed.output  # no empty table frame

    unknown = scoregate("runs", "show", run_id, "--gate", "nope")
    assert (
        unknown.code == 1 and "has no gate 'nope'" in unknown.output and "hallucinations_per_summary" in unknown.output
    )
    bad_by = scoregate("runs", "show", run_id, "--worst", "1", "--by", "nope")
    assert bad_by.code == 1 and "unknown --by score 'nope'" in bad_by.output and "faithfulness_score" in bad_by.output


def test_runs_show_item_prints_the_whole_item(
    gated_run: tuple[str, list[str]], runs: Runs, scoregate: Callable[..., CliResult]
) -> None:
    run_id, breaking = gated_run
    item = breaking[0]
    result = scoregate("runs", "show", run_id, "--item", item)
    assert result.code == 0, result.output
    stored = next(r for r in runs.results(run_id) if r["item_id"] == item)
    assert f"item {item}" in result.output
    for field in stored["input"]:
        assert f"{field}:" in result.output
    assert "## TL;DR" in result.out and "chars; --json for all]" in result.output  # the transcript is folded
    assert "hallucination_count: 3" in result.output
    assert "reasoning:" in result.output
    assert "task scripted-1:" in result.output and " ms, tokens in/out " in result.output
    assert "cache miss" in result.output and "retries 0" in result.output
    detail = json.loads(scoregate("runs", "show", run_id, "--item", item, "--json").out)
    assert detail["item_id"] == item and detail["input"] == stored["input"] and detail["calls"]
    missing = scoregate("runs", "show", run_id, "--item", item[:-1] + "#")
    assert missing.code == 1 and "has no item" in missing.output and "did you mean" in missing.output


def test_diff_sorts_shared_items_by_the_largest_change_with_outputs_and_word_diff(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs, project_dir: Path
) -> None:
    t = titles(project_dir)
    script(scripted_server, hallucinations={}, scores=dict(zip(t, [3, 3, 3, 3, 3, 3], strict=True)))
    assert scoregate("run", "smoke", "--no-mlflow", "--no-cache").code == 0
    a = runs.latest()
    script(
        scripted_server, hallucinations={}, scores=dict(zip(t, [4, 1, 3, 5, 3, 3], strict=True)),
        extra_text={t[3]: "A closing note on deployment."},
    )  # fmt: skip
    assert scoregate("run", "smoke", "--no-mlflow", "--no-cache").code == 0
    b = runs.latest()
    ids = item_ids(runs, b)

    report = json.loads(scoregate("diff", a, b, "--by", "faithfulness_score", "--json").out)
    assert report["by"] == "faithfulness_score" and report["shared_items"] == 6
    deltas = [d["deltas"]["faithfulness_score"] for d in report["items"]]
    assert deltas[:3] == [2.0, -2.0, 1.0] or deltas[:3] == [-2.0, 2.0, 1.0]
    assert [abs(x) for x in deltas] == sorted((abs(x) for x in deltas), reverse=True)
    assert sorted(report["unchanged"]) == sorted(ids[t[i]] for i in (2, 4, 5))  # 3→3, same output: no change
    assert report["changed"] == len(report["items"]) == 3
    changed = next(d for d in report["items"] if d["item_id"] == ids[t[3]])
    assert changed["output_b"].endswith("A closing note on deployment.")
    assert "{+A closing note on deployment.+}" in changed["word_diff"]

    one = scoregate("diff", a, b, "--item", ids[t[3]])
    assert one.code == 0, one.output
    assert ids[t[3]] in one.output and "faithfulness_score 3→5 (+2)" in one.output
    assert "{+A closing note on deployment.+}" in one.output
    default = json.loads(scoregate("diff", a, b, "--json").out)
    keys = report["items"][0]["deltas"]
    gated = [g["metric"] for g in runs.manifest(b)["receipts"]["gates"] if g["metric"] in keys]
    assert default["by"] == gated[0]  # the run's primary metric: the first per-item score its gates use
    assert all(d["deltas"][default["by"]] == 0 for d in default["items"])  # the primary metric did not move...
    text = scoregate("diff", a, b).output
    assert f"6 shared items, 3 changed, sorted by the largest change of {default['by']}" in text
    assert f"no item's {default['by']} changed; these items changed other scores or their output" in text  # ...so
    assert "unchanged (same scores and output in both runs): " in text
    assert all(f"─ {ids[t[i]]} ─" not in text for i in (2, 4, 5))  # listed once, not as a change
    bad = scoregate("diff", a, b, "--by", "nope")
    assert bad.code == 1 and "unknown --by score 'nope'" in bad.output


def test_diff_of_two_identical_runs_lists_no_change(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path
) -> None:
    assert scoregate("run", "counters", "--no-mlflow", "--no-langfuse").code == 0
    assert scoregate("run", "counters", "--no-mlflow", "--no-langfuse").code == 0  # answered from the cache
    a, b = sorted(runs.ids(), key=lambda r: runs.manifest(r)["started_at"])

    report = json.loads(scoregate("diff", a, b, "--json").out)
    assert report["items"] == [] and report["changed"] == 0 and len(report["unchanged"]) == 6
    text = scoregate("diff", a, b)
    assert text.code == 0 and "6 shared items, none changed" in text.output
    assert "largest change" not in text.output and "Δ" not in text.output
    one = scoregate("diff", a, b, "--item", report["unchanged"][0])  # asked for by name: shown all the same
    assert one.code == 0 and report["unchanged"][0] in one.output and "none changed" in one.output
    assert "no item's" not in one.output


def test_word_diff_marks_removed_and_added_words() -> None:
    assert word_diff("the cat sat", "the dog sat down") == "the [-cat-] {+dog+} sat {+down+}"
    assert word_diff("same", "same") == "same"


def test_a_gate_whose_summary_records_no_threshold_is_named_not_a_traceback(tmp_path: Path) -> None:
    from scoregate.analysis.items import gate_breakers
    from scoregate.errors import ScoregateError
    from scoregate.store.records import ItemResult, Score
    from scoregate.store.run_store import RunStore

    store = RunStore.create(tmp_path, "r1", {"receipts": {}})
    store.append(ItemResult(0, "item-0", "p@1", {}, "out", scores=[Score("s", 0.2, "numeric", "ev")]))
    store.close()
    gate = {"name": "g", "metric": "s", "stat": "mean", "op": ">=", "threshold": None, "status": "fail"}
    store.write_summary({"run_id": "r1", "scores": {}, "run_metrics": {}, "gates": [gate], "verdict": "fail"})

    with pytest.raises(ScoregateError, match="gate g of run r1 records no rule an item's value can break"):
        gate_breakers(store, "g")


@pytest.mark.parametrize(
    "text",
    ["short", "word " * 100, " \n\t" * 200 + "late words after a long blank start", "x" * 500, "a  b\n" * 80 + "end"],
)
def test_an_excerpt_reads_only_the_start_of_a_long_output_and_says_the_same(text: str) -> None:
    from scoregate.analysis.items import EXCERPT_CHARS, excerpt

    whole = " ".join(text.split())
    expected = whole if len(whole) <= EXCERPT_CHARS else whole[: EXCERPT_CHARS - 1].rstrip() + "…"

    assert excerpt(text) == expected
