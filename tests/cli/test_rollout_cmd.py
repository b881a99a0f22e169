"""`scoregate rollout` on the terminal: a refused start is one line and a non-zero exit, nothing moved; status says
where the rollout stands and what to run next, at 80 columns and as Markdown evidence."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.app.rollout_record import record_path
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.projects import CliResult
from support.promotion_runs import PROMPT, logged_run
from support.promotion_runs import project as project  # the fixture
from support.rollout_traffic import live_scores

pytestmark = pytest.mark.usefixtures("mlflow_store")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--share", "120%"], "--share must be between 0% and 100%"),
        (["--share", "0"], "--share must be between 0% and 100%"),
        (["--share", "10%", "--range", "one"], "write MIN,MAX"),
        (["--share", "10%", "--guardrail", "latency=3"], "unknown guardrail 'latency'"),
    ],
)
def test_a_refused_start_is_one_clear_line_and_moves_nothing(
    scoregate: Callable[..., CliResult], project: Path, fake_langfuse: FakeLangfuse, args: list[str], expected: str
) -> None:
    result = scoregate("rollout", "start", PROMPT, "--version", "2", "--metric", "quality", *args)

    assert result.code != 0 and expected in result.output, result.output
    assert not record_path(project, PROMPT).exists()
    assert all("canary" not in v["labels"] for v in fake_langfuse.state.prompts[PROMPT])


def test_start_then_status_in_words_and_as_markdown(
    scoregate: Callable[..., CliResult], project: Path, fake_langfuse: FakeLangfuse
) -> None:
    logged_run(project, "counters"), logged_run(project, "smoke")

    started = scoregate("rollout", "start", PROMPT, "--version", "2", "--share", "10%", "--metric", "quality")
    status = scoregate("rollout", "status", "--markdown", str(project / "rollout.md"))

    assert started.code == 0, started.output
    assert f"rollout of {PROMPT}: `canary` on v2, `production` on v1" in " ".join(started.out.split())
    assert status.code == 0, status.output
    assert f"{PROMPT}: live; canary v2 at 10%, production v1" in status.out
    assert f"next: `scoregate rollout watch {PROMPT}`" in " ".join(status.out.split())
    text = (project / "rollout.md").read_text(encoding="utf-8")
    assert [line for line in text.splitlines() if len(line) > 80 and len(line.split()) > 2] == []
    assert text.startswith("<!-- scoregate-evidence: rollout status -->")
    assert f"| {PROMPT} | live | v2 over v1 | 10% |" in text
    assert json.loads(scoregate("rollout", "status", "--json").out)[0]["state"] == "live"


def test_watch_prints_each_poll_and_the_decision_and_status_then_says_where_the_labels_are(
    scoregate: Callable[..., CliResult], project: Path, fake_langfuse: FakeLangfuse, tmp_path: Path
) -> None:
    logged_run(project, "counters"), logged_run(project, "smoke")
    assert scoregate("rollout", "start", PROMPT, "--version", "2", "--share", "10%", "--metric", "q").code == 0
    scores = str(live_scores(tmp_path / "live.jsonl", effect=0.2))

    told = scoregate("rollout", "watch", PROMPT, "--scores", scores, "--polls", "1")
    done = scoregate("rollout", "watch", PROMPT, "--scores", scores, "--auto")
    status = scoregate("rollout", "status", PROMPT)

    words = " ".join(told.out.split())
    assert told.code == 0 and "poll 1: promote" in words, told.output
    assert f"to carry it out: `scoregate rollout watch {PROMPT} --auto`" in words
    assert "done: `production` moved to v2" in " ".join(done.out.split()), done.output
    assert f"{PROMPT}: promoted; v2 holds production and canary (production was v1)" in " ".join(status.out.split())


def test_watch_without_langfuse_or_a_scores_file_is_one_line_saying_what_to_set(
    scoregate: Callable[..., CliResult], project: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    logged_run(project, "counters"), logged_run(project, "smoke")
    assert scoregate("rollout", "start", PROMPT, "--version", "2", "--share", "10%", "--metric", "quality").code == 0
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "LANGFUSE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)

    result = scoregate("rollout", "watch", PROMPT, "--polls", "1")

    assert result.code != 0 and "Traceback" not in result.output
    assert "Langfuse is not configured and no --scores FILE was given" in result.output, result.output
    assert "set LANGFUSE_PUBLIC_KEY" in result.output


@pytest.mark.parametrize("score_range", ["1,1", "0.5,0.5"])
def test_a_range_without_width_is_refused_as_it_could_never_decide(
    scoregate: Callable[..., CliResult], project: Path, fake_langfuse: FakeLangfuse, score_range: str
) -> None:
    result = scoregate(
        "rollout", "start", PROMPT, "--version", "2", "--metric", "quality", "--share", "10%", "--range", score_range
    )

    assert result.code == 2, result.output
    assert "is not a finite [min, max] with min below max" in result.output, result.output
    assert not record_path(project, PROMPT).exists()
    assert all("canary" not in v["labels"] for v in fake_langfuse.state.prompts[PROMPT])
