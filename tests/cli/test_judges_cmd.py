"""`scoregate judges plan` / `apply` as a user runs them: what they print, and one-line refusals."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import point_at
from support.projects import CliResult

Cli = Callable[..., CliResult]
JUDGES = ("ev_actionability_v1", "ev_faithfulness_v1", "format_checks_v1")


@pytest.fixture
def fake(project_dir: Path, mlflow_store: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangfuse]:
    """The fake Langfuse (v2 API) with the environment pointing at it; MLflow on a migrated store."""
    with FakeLangfuse(server_mode="new") as server:
        point_at(monkeypatch, server)
        yield server


def test_plan_lists_each_file_and_writes_nothing(scoregate: Cli, fake: FakeLangfuse) -> None:
    result = scoregate("judges", "plan", *JUDGES)

    assert result.code == 0
    row = next(line for line in result.out.splitlines() if "ev_actionability_v1" in line)
    assert "actionability_score" in row and "to create" in row
    assert "format_checks_v1: no counter can run in Langfuse: format_adherence_det stays local" in " ".join(
        result.output.split()
    )
    assert "plan: 2 writes to make (2 new, 0 green, 0 described, 0 unchanged, 1 local only); nothing written" in (
        result.output
    )
    assert fake.state.evals.evaluators == {}


def test_apply_then_apply_again_says_nothing_was_written(scoregate: Cli, fake: FakeLangfuse) -> None:
    first = scoregate("judges", "apply", *JUDGES)
    second = scoregate("judges", "apply", *JUDGES)

    assert first.code == second.code == 0
    assert "applied: 2 writes" in first.output
    assert "applied: 0 writes" in second.output and "2 unchanged" in second.output
    assert len(fake.state.evals.evaluators) == 2


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_a_server_without_v2_is_refused_in_one_line(
    scoregate: Cli, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    with FakeLangfuse(server_mode="old") as old:
        point_at(monkeypatch, old)
        result = scoregate("judges", command)

    assert result.code != 0
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1, result.err
    assert "server 4.16.0, which has no evaluator API" in result.output
    assert "v4.24 or newer" in result.output


def test_without_langfuse_keys_the_command_says_what_to_set(scoregate: Cli) -> None:
    result = scoregate("judges", "plan")

    assert result.code != 0
    assert "LANGFUSE" in result.output


def test_a_changed_judge_plans_one_green_evaluator_in_agreeing_words(
    scoregate: Cli, fake: FakeLangfuse, project_dir: Path
) -> None:
    assert scoregate("judges", "apply", "ev_faithfulness_v1").code == 0
    judge = project_dir / "evaluators" / "ev_faithfulness_v1.yaml"
    judge.write_text(judge.read_text(encoding="utf-8").replace("{{summary}}", "{{ summary }} (strictly)", 1))

    result = scoregate("judges", "plan", "ev_faithfulness_v1")

    (blue,) = fake.state.evals.evaluators
    assert "plan: 1 write to make (0 new, 1 green, 0 described, 0 unchanged, 0 local only)" in result.output
    assert f"rules keep scoring with {blue} (blue)" in result.output
    assert "until `scoregate judges promote ev_faithfulness_v1`" in result.output


@pytest.mark.parametrize("command", [["shadow", "ev_faithfulness_v1"], ["promote", "ev_faithfulness_v1"]])
def test_shadow_and_promote_on_a_server_without_v2_are_refused_in_one_line(
    scoregate: Cli, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    with FakeLangfuse(server_mode="old") as old:
        point_at(monkeypatch, old)
        result = scoregate("judges", *command)

    assert result.code != 0
    assert len([line for line in result.err.splitlines() if line.strip()]) == 1, result.err
    assert "server 4.16.0, which has no evaluator API" in result.output


def test_promote_with_no_rule_running_the_judge_says_what_to_do(scoregate: Cli, fake: FakeLangfuse) -> None:
    assert scoregate("judges", "apply", "ev_faithfulness_v1").code == 0

    result = scoregate("judges", "promote", "ev_faithfulness_v1")

    assert result.code != 0
    assert "no rule runs ev_faithfulness_v1 in Langfuse" in result.output


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_a_judge_prompt_using_an_undeclared_variable_is_one_line_and_nothing_is_written(
    scoregate: Cli, fake: FakeLangfuse, project_dir: Path, command: str
) -> None:
    judge = project_dir / "evaluators" / "ev_actionability_v1.yaml"
    judge.write_text(judge.read_text(encoding="utf-8").replace("{{summary}}", "{{summary}} {{audience}}", 1))

    result = scoregate("judges", command, "ev_actionability_v1")

    assert result.code == 1, result.output
    assert "prompt: uses {{audience}} but `variables:` has no 'audience'" in result.output, result.output
    assert "add `audience: <path>` under variables" in result.output
    assert fake.state.evals.evaluators == {}


def test_a_judge_variable_reading_an_unknown_source_is_one_line_and_nothing_is_written(
    scoregate: Cli, fake: FakeLangfuse, project_dir: Path
) -> None:
    judge = project_dir / "evaluators" / "ev_actionability_v1.yaml"
    text = judge.read_text(encoding="utf-8")
    judge.write_text(text.replace("desired_style: input.desired_style", "desired_style: request.style", 1))

    result = scoregate("judges", "plan", "ev_actionability_v1")

    assert result.code == 1, result.output
    assert "variables.desired_style: reads unknown source 'request.style'" in result.output, result.output
    assert fake.state.evals.evaluators == {}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("source: input.transcript", "source: request.transcript"), "unknown source 'request.transcript'"),
        (
            ("  - counter: references_count\n", "  - counter: references_count\n  - counter: word_count\n"),
            "score key 'word_count' is written twice",
        ),
    ],
)
def test_a_counters_file_validate_refuses_is_refused_by_judges_plan_too(
    scoregate: Cli, fake: FakeLangfuse, project_dir: Path, change: tuple[str, str], expected: str
) -> None:
    counters = project_dir / "evaluators" / "counters_v1.yaml"
    text = counters.read_text(encoding="utf-8")
    assert change[0] in text
    counters.write_text(text.replace(change[0], change[1], 1), encoding="utf-8")

    result = scoregate("judges", "apply", "counters_v1")

    assert result.code == 1, result.output
    assert expected in result.output, result.output
    assert fake.state.evals.evaluators == {}


def test_a_rule_scoped_to_a_dataset_langfuse_lacks_names_the_rule_file_and_what_to_do(
    scoregate: Cli, fake: FakeLangfuse, project_dir: Path
) -> None:
    (project_dir / "rules").mkdir()
    rule = "name: gold_items\njudges: [ev_actionability_v1]\nfilter: {experiment_dataset: gold_v9}\n"
    (project_dir / "rules" / "gold_items.yaml").write_text(rule, encoding="utf-8")

    result = scoregate("judges", "plan")

    assert result.code == 1, result.output
    assert "rules/gold_items.yaml: filter.experiment_dataset: no dataset 'gold_v9' in Langfuse" in result.output
    assert "scoregate datasets sync" in result.output, result.output


def test_a_rule_naming_a_missing_judge_says_which_judges_it_can_name(
    scoregate: Cli, fake: FakeLangfuse, project_dir: Path
) -> None:
    (project_dir / "rules").mkdir()
    rule = "name: live\njudges: [ev_actionabilty_v1]\n"
    (project_dir / "rules" / "live.yaml").write_text(rule, encoding="utf-8")

    result = scoregate("judges", "plan")

    assert result.code == 1, result.output
    assert "rules/live.yaml: judges: 'ev_actionabilty_v1' cannot run in Langfuse" in result.output, result.output
    assert "did you mean `ev_actionability_v1`" in result.output, result.output
    assert fake.state.evals.rules == {}
