"""`provider: scripted`: canned replies from scoregate.yaml or a file, deterministic, with no server and no network,
for tests and benches that need a model's replies but not its HTTP."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.catalog.models import ModelSpec
from scoregate.providers.base import CompletionRequest
from scoregate.providers.registry import build_provider, model_problems
from support.projects import CliResult, Runs

Edit = Callable[[Path, Callable[[Any], None]], None]
JUDGES = ("ev_actionability_v1", "ev_faithfulness_v1", "ev_conciseness_v1")


@pytest.fixture
def project_dir(canned_project_dir: Path) -> Path:
    """The test project with its model as `provider: scripted`."""
    return canned_project_dir


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a network connection fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a network connection was attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def script(edit_yaml: Edit, project_dir: Path, **options: Any) -> None:
    """Set the options of the project's `scripted` model."""
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"]["scripted"]["options"].update(options))


def scores_by_item(runs: Runs, run_id: str | None = None) -> dict[str, dict[str, Any]]:
    return {r["item_id"]: {s["name"]: s["value"] for s in r["scores"]} for r in runs.results(run_id)}


def test_a_whole_run_with_judges_is_answered_without_a_network_connection(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path, no_network: None
) -> None:
    result = scoregate("run", "smoke", "--no-mlflow", "--no-langfuse")

    assert result.code == 0, result.output
    results = runs.results()
    assert len(results) == 6 and all(r["error"] is None for r in results)
    for row in results:
        how_to = row["input"]["desired_style"] == "howto"
        assert ("## Step-by-step" in row["output"]) == how_to, row["item_id"]  # the rule that matched its prompt
        scores = {s["name"]: s["value"] for s in row["scores"]}
        assert scores["faithfulness_score"] == scores["actionability_score"] == scores["conciseness_score"] == 5
        assert scores["hallucination_count"] == 0
        assert {c["endpoint"] for c in row["calls"]} == {runs.manifest()["receipts"]["model"]["endpoint"]}
        assert all(c["cost_usd"] == 0 and c["tokens_in"] > 0 for c in row["calls"])
    assert runs.manifest()["receipts"]["model"]["endpoint"].startswith("scripted:")


def test_rules_pick_replies_by_request_text_and_judge_and_runs_repeat_exactly(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path, edit_yaml: Edit
) -> None:
    faithful = json.dumps({"reasoning": "two claims are not in the transcript", "faithfulness_score": 2,
                           "hallucination_count": 2})  # fmt: skip
    replies = [
        {"match": "ReasonBench", "schema": "ev_faithfulness_v1", "reply": faithful},
        {"match": "Step-by-step", "reply": "## TL;DR\nDo it.\n\n## Step-by-step\n1. Run it."},
    ]
    script(edit_yaml, project_dir, replies=replies, default="## TL;DR\nNews.", score=3)

    first = scoregate("run", "smoke", "--no-mlflow", "--no-langfuse", "--no-cache")
    first_id = runs.latest()
    second = scoregate("run", "smoke", "--no-mlflow", "--no-langfuse", "--no-cache")

    assert first.code == 0 and second.code == 0, first.output + second.output
    scores = scores_by_item(runs, first_id)
    reasonbench = next(r["item_id"] for r in runs.results(first_id) if "ReasonBench" in r["input"]["transcript"])
    assert scores[reasonbench]["faithfulness_score"] == 2 and scores[reasonbench]["hallucination_count"] == 2
    others = [item for item in scores if item != reasonbench]
    assert {scores[item]["faithfulness_score"] for item in others} == {3}  # generated JSON at `score: 3`
    assert {scores[item]["actionability_score"] for item in scores} == {3}
    outputs = {r["item_id"]: r["output"] for r in runs.results(first_id)}
    assert {o.split("\n")[1] for o in outputs.values()} == {"Do it.", "News."}
    assert scores_by_item(runs) == scores
    assert {r["item_id"]: r["output"] for r in runs.results()} == outputs


def test_replies_come_from_a_file_beside_scoregate_yaml(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path, edit_yaml: Edit
) -> None:
    (project_dir / "canned.yaml").write_text(
        "- match: Step-by-step\n  reply: 'from the file: how-to'\n- reply: 'from the file: catch-up'\n",
        encoding="utf-8",
    )
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"]["scripted"].update(
        options={"replies_file": "canned.yaml"}))  # fmt: skip

    result = scoregate("run", "counters", "--no-mlflow")

    assert result.code == 0, result.output
    outputs = {r["input"]["desired_style"]: r["output"] for r in runs.results()}
    assert outputs == {"howto": "from the file: how-to", "catchup": "from the file: catch-up"}


def test_a_bad_replies_file_is_named_before_any_run(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path, edit_yaml: Edit
) -> None:
    (project_dir / "canned.yaml").write_text("- match: x\n", encoding="utf-8")
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"]["scripted"].update(
        options={"replies_file": "canned.yaml"}))  # fmt: skip

    result = scoregate("run", "counters", "--no-mlflow")

    assert result.code == 1, result.output
    assert f"{project_dir / 'canned.yaml'}: not a list of scripted replies: 0.reply: Field required" in result.output
    assert runs.ids() == []


def test_a_request_no_reply_fits_fails_its_item_only(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"]["scripted"].update(
        options={"replies": [{"match": "Step-by-step", "reply": "## TL;DR\nHow."}]}))  # fmt: skip

    result = scoregate("run", "counters", "--no-mlflow")

    assert result.code == 0, result.output
    errors = {r["input"]["desired_style"]: r["error"] for r in runs.results()}
    assert errors["howto"] is None
    assert "no scripted reply fits this request to 'scripted-1': add a rule, or a `default:`" in errors["catchup"]


def test_a_changed_script_is_never_answered_from_the_cache(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path, edit_yaml: Edit
) -> None:
    script(edit_yaml, project_dir, replies=[], default="first script")
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    script(edit_yaml, project_dir, default="second script")

    again = scoregate("run", "counters", "--no-mlflow")

    assert again.code == 0, again.output
    assert {r["output"] for r in runs.results()} == {"second script"}
    assert not any(c["cached"] for r in runs.results() for c in r["calls"])


def test_the_documented_example_is_a_valid_script_that_answers_as_the_page_says() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "files" / "scoregate-yaml.md").read_text(encoding="utf-8")
    section = page.split("### Scripted models", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    spec = ModelSpec.model_validate(yaml.safe_load(block)["models"]["canned"])
    assert model_problems("canned", spec) == []
    provider = build_provider("canned", spec)
    schema = {"type": "object", "properties": {"faithfulness_score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}}}

    def ask(text: str, **fields: Any) -> str:
        request = CompletionRequest(messages=({"role": "user", "content": text},), **fields)
        return asyncio.run(provider.complete(request)).text

    assert ask("Write the Step-by-step section").startswith("## TL;DR\nInstall it")
    assert ask("Summarise this episode") == "## TL;DR\nA canned summary."
    judged = json.loads(ask("ReasonBench ...", json_schema=schema, schema_name="ev_faithfulness_v1"))
    assert judged["faithfulness_score"] == 3 and judged["hallucination_count"] == 1
    assert json.loads(ask("Other ...", json_schema=schema, schema_name="ev_faithfulness_v1")) == {
        "faithfulness_score": 4
    }
    tldrs = {ask("Security Sync") for _ in range(30)}
    assert tldrs == {"## TL;DR\nA short summary.", "## TL;DR\nA summary far longer than its cap ..."}
    assert {json.loads(ask("x", json_schema=schema, schema_name="ev_conciseness_v1"))["faithfulness_score"]
            for _ in range(30)} == {3, 5}  # fmt: skip


# ---------------------------------------------------------------- a seeded stochastic mode


def drawn(options: dict[str, Any]) -> Callable[..., str]:
    """ask(text, **fields): one reply of a fresh `provider: scripted` model with these options (a new run)."""
    provider = build_provider("wobbly", ModelSpec.model_validate({"provider": "scripted", "model": "w-1",
                                                                  "options": options}))  # fmt: skip

    def ask(text: str, **fields: Any) -> str:
        request = CompletionRequest(messages=({"role": "user", "content": text},), **fields)
        return asyncio.run(provider.complete(request)).text

    return ask


COIN = {"replies": [{"match": "item", "reply": [{"text": "heads", "weight": 1}, {"text": "tails", "weight": 1}]}]}


def test_a_rule_with_weighted_replies_draws_one_per_call_seeded_by_request_and_call() -> None:
    first, again = drawn(COIN), drawn(COIN)

    a = [first("item A") for _ in range(40)]
    b = [first("item B") for _ in range(40)]

    assert set(a) == {"heads", "tails"} and 10 < a.count("heads") < 30  # repeats of one request differ
    assert [again("item A") for _ in range(40)] == a  # a new run draws the same sequence: reproducible
    assert b != a  # each item its own draws
    reseeded = drawn({**COIN, "seed": 1})
    assert [reseeded("item A") for _ in range(40)] != a  # `seed:` picks another sequence


def test_a_judge_rule_can_draw_its_score() -> None:
    schema = {"type": "object", "properties": {"faithfulness_score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}}}
    ask = drawn({"replies": [{"schema": "ev_faithfulness_v1", "reply": [{"score": 2, "weight": 1},
                                                                        {"score": 5, "weight": 3}]}]})  # fmt: skip

    scores = [json.loads(ask("x", json_schema=schema, schema_name="ev_faithfulness_v1")) for _ in range(200)]

    assert {s["faithfulness_score"] for s in scores} == {2, 5}
    assert 120 < sum(s["faithfulness_score"] == 5 for s in scores) < 180  # about 3 in 4


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ({"reply": [{"weight": 1}]}, "a drawn reply needs `text:` or `score:`"),
        ({"reply": [{"text": "a", "score": 3}]}, "a drawn reply needs `text:` or `score:`"),
        ({"reply": [{"text": "a", "weight": 0}]}, "greater than 0"),
        ({"reply": []}, "at least 1 item"),
        ({"reply": [{"score": 3}]}, "a drawn `score:` answers a judge: give the rule a `schema:`"),
    ],
)
def test_a_bad_drawn_reply_is_refused_with_what_to_write(rule: dict[str, Any], problem: str) -> None:
    spec = ModelSpec.model_validate({"provider": "scripted", "model": "w-1", "options": {"replies": [rule]}})

    assert any(problem in p for p in model_problems("wobbly", spec)), model_problems("wobbly", spec)


def test_repeats_of_a_run_differ_and_the_same_run_again_draws_the_same(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path, edit_yaml: Edit
) -> None:
    long = "## TL;DR\n" + "word " * 120
    coin = [{"text": long, "weight": 1}, {"text": "## TL;DR\nShort.", "weight": 1}]
    script(edit_yaml, project_dir, replies=[{"match": "Open Models Weekly", "reply": coin}], default="## TL;DR\nNews.")

    assert scoregate("run", "counters", "--repeat", "6", "--no-cache", "--no-mlflow").code == 0
    first = runs.latest()
    assert scoregate("run", "counters", "--repeat", "6", "--no-cache", "--no-mlflow").code == 0

    def outputs(run_id: str) -> list[tuple[int, str]]:
        from scoregate.store.repeats import iter_all_results
        from scoregate.store.run_store import RunStore

        store = RunStore.open(runs.root, run_id)
        return sorted((r.repeat, r.output) for r in iter_all_results(store) if r.item_id == "smoke-001")

    drawn_first = outputs(first)
    assert {out for _, out in drawn_first} == {long, "## TL;DR\nShort."}
    assert outputs(runs.latest()) == drawn_first
