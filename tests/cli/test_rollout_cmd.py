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
    assert text.startswith("<!-- scoregate-evidence: rollout status -->") and f"**{PROMPT}**" in text
    assert json.loads(scoregate("rollout", "status", "--json").out)[0]["state"] == "live"
