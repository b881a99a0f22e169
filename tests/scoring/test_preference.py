"""`scoregate compare --judge`: the pairwise preference judge, asked in both orders to cancel position bias."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest
import typer

import scoregate.cli as scoregate_cli
from scoregate.app.pairwise import judge_runs
from scoregate.cli import compare_cmd
from scoregate.errors import ScoregateError
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec
from scoregate.scoring.preference import pair_context
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore
from scoregate.tracks.project import load_project
from support.compare_runs import write_run
from support.projects import CliResult
from support.scripted_openai import RecordedRequest, ScriptedOpenAI

ITEMS = [f"ep-{i}" for i in range(8)]
MARK_A, MARK_B = "[from run A]", "[from run B]"


def store_pair(project_dir: Path, **outputs_b: Any) -> tuple[RunStore, RunStore]:
    """Runs A and B over ITEMS whose outputs carry a marker naming the run (B's outputs overridable per item)."""
    scores = {item: {"quality": 3} for item in ITEMS}
    a = write_run(project_dir / "runs", "run-a", scores, outputs={i: f"Summary of {i} {MARK_A}" for i in ITEMS})
    b_outputs = {i: outputs_b.get(i.replace("-", "_"), f"Summary of {i} {MARK_B}") for i in ITEMS}
    return a, write_run(project_dir / "runs", "run-b", scores, outputs=b_outputs)


def shown_first(request: RecordedRequest) -> str:
    """Which run's summary the judge saw first ("A" or "B")."""
    text = request.text
    return "A" if text.index(MARK_A) < text.index(MARK_B) else "B"


def reply(winner: str, strength: int = 2) -> str:
    """A valid preference reply."""
    return json.dumps({"reasoning": "decided", "preference_winner": winner, "preference_strength": strength})


def script_judge(server: ScriptedOpenAI, choose: Callable[[dict[str, Any], str], str]) -> None:
    """Judge requests get `choose(body, run shown first)`; task requests the default reply."""

    def responder(body: dict[str, Any]) -> str:
        request = RecordedRequest("POST", "", body, {}, 0.0)
        if not request.is_judge or MARK_A not in request.text:
            return server.default_reply(body)
        return choose(body, shown_first(request))

    server.responder = responder


def wilson(successes: float, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval, by the textbook formula."""
    z = NormalDist().inv_cdf(0.975)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def judge(project_dir: Path, a: RunStore, b: RunStore, **kwargs: Any) -> Any:
    """Judge run B against run A with the project's shipped pairwise judge on the scripted model."""
    return judge_runs(load_project(project_dir), a, b, use_cache=False, **kwargs)


def test_a_content_preference_holds_in_both_orders_and_wins(project_dir: Path, scripted_server: ScriptedOpenAI) -> None:
    a, b = store_pair(project_dir)
    script_judge(scripted_server, lambda _body, first: reply("A" if first == "B" else "B", strength=3))

    result = judge(project_dir, a, b)

    requests = [r for r in scripted_server.judge_requests() if MARK_A in r.text]
    assert len(requests) == 2 * len(ITEMS)
    for item in ITEMS:  # each item once with A's summary first and once with B's
        orders = sorted(shown_first(r) for r in requests if f"Summary of {item} " in r.text)
        assert orders == ["A", "B"]
    w = result.win_rate
    assert (w.n, w.b_wins, w.a_wins, w.ties, w.win_rate) == (8, 8, 0, 0, 1.0)
    assert (w.ci_low, w.ci_high) == pytest.approx(wilson(8, 8))
    assert (result.judged, result.orders_agreed, result.coverage) == (8, 8, 1.0)
    assert result.first_shown_wins == 8 and result.decisive_orders == 16  # first place won exactly half the time
    assert all(p.outcome == "B" and p.strength == 3.0 for p in result.pairs)
    assert result.calls == 16 and result.tokens_in


def test_a_judge_that_follows_position_gets_ties_not_a_winner(
    project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    a, b = store_pair(project_dir)
    script_judge(scripted_server, lambda _body, _first: reply("A"))  # always the summary shown first

    result = judge(project_dir, a, b)

    w = result.win_rate
    assert (w.b_wins, w.a_wins, w.ties, w.win_rate, w.sign_test_p) == (0, 0, 8, 0.5, None)
    assert (result.orders_agreed, result.first_shown_wins, result.decisive_orders) == (0, 16, 16)
    assert all(p.reason == "the two orders disagree (position bias): a tie" for p in result.pairs)


def test_an_unmeasured_order_makes_the_item_null_with_its_reason(
    project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    a, b = store_pair(project_dir)

    def choose(body: dict[str, Any], first: str) -> str:
        text = "\n".join(str(m["content"]) for m in body["messages"])
        if "Summary of ep-3 " in text and first == "B":
            return "I prefer the first one."
        if "Summary of ep-5 " in text:
            return reply("C")
        return reply("A" if first == "B" else "B")

    script_judge(scripted_server, choose)

    result = judge(project_dir, a, b)

    by_item = {p.item_id: p for p in result.pairs}
    assert by_item["ep-3"].outcome is None
    assert by_item["ep-3"].reason.startswith("with run B shown first: judge reply is not JSON")
    assert by_item["ep-5"].outcome is None
    assert "not one of A, B" in by_item["ep-5"].reason
    assert (result.items, result.judged, result.coverage) == (8, 6, 0.75)
    assert (result.win_rate.n, result.win_rate.b_wins) == (6, 6)
    assert sum(result.null_reasons.values()) == 2


def test_identical_outputs_tie_without_a_call_and_a_failed_item_is_null(
    project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    a, b = store_pair(project_dir, ep_0=f"Summary of ep-0 {MARK_A}")
    failed = ItemResult(index=0, item_id="ep-1", prompt="p@1", input={}, output=None, error="model call failed: 500")
    runs_b = b.directory / "results.jsonl"
    lines = [line for line in runs_b.read_text().splitlines() if '"item_id": "ep-1"' not in line]
    runs_b.write_text("\n".join([json.dumps(failed.to_json_dict()), *lines]) + "\n")
    script_judge(scripted_server, lambda _body, first: reply("A" if first == "B" else "B"))

    result = judge(project_dir, a, b)

    by_item = {p.item_id: p for p in result.pairs}
    assert (by_item["ep-0"].outcome, by_item["ep-0"].reason) == ("tie", "identical outputs: a tie without a judge call")
    assert (by_item["ep-1"].outcome, by_item["ep-1"].reason) == (None, "run B has no output for this item")
    assert not [r for r in scripted_server.judge_requests() if "ep-0 " in r.text or "ep-1 " in r.text]
    assert (result.win_rate.n, result.win_rate.b_wins, result.win_rate.ties) == (7, 6, 1)


def test_the_judge_sees_each_summary_where_its_variables_say(project_dir: Path) -> None:
    spec = load_project(project_dir).evaluators["ev_preference_v1"]
    assert isinstance(spec, LlmJudgeSpec)
    nested = spec.model_copy(update={"variables": {**spec.variables, "summary_a": "metadata.pair.first",
                                                   "summary_b": "output"}})  # fmt: skip
    item = ItemResult(index=0, item_id="x", prompt="p@1", input={"transcript": "T", "title": "t"}, output="out",
                      metadata={"inferred_input": {"desired_style": "howto"}})  # fmt: skip

    ctx = pair_context(nested, item, "first text", "second text", call_model=None)

    assert ctx.metadata["pair"] == {"first": "first text"}
    assert ctx.output == "second text"
    assert ctx.input == {"transcript": "T", "title": "t", "desired_style": "howto"}
    assert item.metadata == {"inferred_input": {"desired_style": "howto"}}  # the stored result is not changed


def test_a_judge_without_both_summaries_is_a_clear_error(project_dir: Path) -> None:
    a, b = store_pair(project_dir)
    shipped = (project_dir / "evaluators" / "ev_preference_v1.yaml").read_text(encoding="utf-8")
    broken = shipped.replace("ev_preference_v1", "ev_half_v1").replace("  summary_b: input.summary_b\n", "")
    (project_dir / "evaluators" / "ev_half_v1.yaml").write_text(broken.replace("{{summary_b}}", "B"), encoding="utf-8")

    with pytest.raises(ScoregateError, match="needs the variables summary_a and summary_b; missing: summary_b"):
        judge(project_dir, a, b, evaluator="ev_half_v1")
    with pytest.raises(ScoregateError, match="'ev_nope' does not exist"):
        judge(project_dir, a, b, evaluator="ev_nope")


@pytest.fixture
def cli(scoregate: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., CliResult]]:
    """The `scoregate` fixture with `compare` registered (as `scoregate.cli` registers it)."""
    app = typer.Typer(pretty_exceptions_enable=False, add_completion=False)
    app.command("compare")(compare_cmd.compare)
    app.command("noop")(lambda: None)  # a second command keeps `compare` a named subcommand
    monkeypatch.setattr(scoregate_cli, "app", app)
    yield scoregate


def test_cli_compare_with_judge_reports_the_win_rate_and_mirrors_it(
    cli: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI, mlflow_store: str
) -> None:
    from mlflow.tracking import MlflowClient

    a, b = store_pair(project_dir)
    script_judge(scripted_server, lambda _body, first: reply("A" if first == "B" else "B"))

    shown = cli("compare", a.run_id, b.run_id, "--judge", "--no-mlflow")
    as_json = cli("compare", a.run_id, b.run_id, "--judge", "--json")

    assert shown.code == 0, shown.output
    assert "pairwise judge ev_preference_v1 (scripted), both orders: B win rate 100% [68%, 100%]" in shown.output
    assert "(B 8 / A 0 / tie 0; judged 8 of 8 items; orders agreed on 8;" in shown.output
    preference = json.loads(as_json.out)["preference"]
    assert preference["win_rate"]["win_rate"] == 1.0
    assert preference["win_rate"]["ci_low"] == pytest.approx(wilson(8, 8)[0])
    assert len(preference["pairs"]) == 8
    mirrored = MlflowClient(tracking_uri=mlflow_store).get_run(json.loads(as_json.out)["mlflow_run_id"])
    assert mirrored.data.metrics["preference_win_rate"] == 1.0
    assert mirrored.data.metrics["preference_ci_low"] == pytest.approx(wilson(8, 8)[0])
