"""`feedback/scores.jsonl` is a local copy (of the imported files and of Langfuse's ratings, with raters' names and
free-text comments): git ignores it, and the pages that say where it is written say so."""

from __future__ import annotations

import subprocess

from support.projects import REPO


def test_git_ignores_the_local_feedback_copy_and_the_docs_say_so() -> None:
    checked = subprocess.run(
        ["git", "check-ignore", "--no-index", "-q", "feedback/scores.jsonl"], cwd=REPO, check=False
    )

    assert checked.returncode == 0, "feedback/scores.jsonl is not git-ignored"
    ratings = " ".join((REPO / "docs" / "langfuse" / "ratings.md").read_text(encoding="utf-8").split())
    assert "`feedback/scores.jsonl` is git-ignored" in ratings
    files = (REPO / "docs" / "files" / "index.md").read_text(encoding="utf-8")
    assert any(line.startswith("feedback/") and "git-ignored" in line for line in files.splitlines())
