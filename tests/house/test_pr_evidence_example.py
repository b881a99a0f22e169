"""The PR-evidence example (examples/pr-evidence/): the workflow parses and calls the real CLI; the posting script,
run as the workflow runs it, keeps ONE comment per pull request up to date on a loopback fake of GitHub's API."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from support.fake_github import BODY_LIMIT, FakeGitHub
from support.markdown_docs import REPO, parse_cli

FOLDER = REPO / "examples" / "pr-evidence"
POST = FOLDER / "post_evidence.py"
MARKER = "<!-- scoregate-pr-evidence -->"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    try:
        yield fake
    finally:
        fake.close()


def _post(
    github: FakeGitHub, *files: Path, token: str | None = None, pr: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GITHUB_TOKEN": token or github.token, "GITHUB_REPOSITORY": github.repo,
           "GITHUB_API_URL": github.url}  # fmt: skip
    env.pop("GITHUB_EVENT_PATH", None)
    args = [sys.executable, str(POST), *map(str, files), *(["--pr", str(github.pr)] if pr else [])]
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)


def _evidence(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(f"<!-- scoregate-evidence: {name} -->\n## scoregate compare\n\n{text}\n", encoding="utf-8")
    return path


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, FOLDER / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_push_updates_the_one_evidence_comment_and_leaves_the_others(github: FakeGitHub, tmp_path: Path) -> None:
    for k in range(130):  # the evidence comment will sit on the second page
        github.add(f"review comment {k}", user="reviewer")
    first = _post(github, _evidence(tmp_path, "catchup.md", "verdict: better"))
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("created the evidence comment: https://github.com/acme/prompts/pull/7#issuecomment-")

    second = _post(github, _evidence(tmp_path, "catchup.md", "verdict: worse"), _evidence(tmp_path, "howto.md", "ok"))

    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("updated the evidence comment:")
    ours = [c for c in github.comments if c["body"].startswith(MARKER)]
    assert len(ours) == 1 and len(github.comments) == 131
    assert "verdict: worse" in ours[0]["body"] and "verdict: better" not in ours[0]["body"]
    assert "scoregate-evidence: howto.md" in ours[0]["body"]
    assert [c["body"] for c in github.comments[:130]] == [f"review comment {k}" for k in range(130)]
    assert ("GET", "/repos/acme/prompts/issues/7/comments?per_page=100&page=2") in github.requests


def test_evidence_longer_than_github_takes_is_cut_and_still_posted(github: FakeGitHub, tmp_path: Path) -> None:
    huge = _evidence(tmp_path, "wide.md", "\n".join(f"| score_{k} | 0.5 | better |" for k in range(6000)))

    result = _post(github, huge)

    assert result.returncode == 0, result.stderr
    body = github.comments[0]["body"]
    assert len(body) <= BODY_LIMIT and body.startswith(MARKER) and "cut to fit GitHub's comment limit" in body


@pytest.mark.parametrize(
    ("case", "expected"),
    [("token", "GitHub answered 401"), ("pr", "no pull request number"), ("file", "cannot read the evidence")],
)
def test_a_problem_is_one_line_saying_what_to_fix_and_posts_nothing(
    github: FakeGitHub, tmp_path: Path, case: str, expected: str
) -> None:
    evidence = _evidence(tmp_path, "catchup.md", "verdict: better")
    if case == "token":
        result = _post(github, evidence, token="wrong")
    elif case == "pr":
        result = _post(github, evidence, pr=False)
    else:
        result = _post(github, tmp_path / "missing.md")

    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr and github.comments == []


def test_only_experiments_whose_prompts_changed_are_run() -> None:
    touched = _module("touched_experiments").touched
    experiments = [
        {"name": "smoke", "prompts": ["summarization-catchup", "summarization-howto"]},
        {"name": "catchup", "prompts": ["summarization-catchup"]},
        {"name": "howto", "prompts": ["summarization-howto"]},
    ]
    assert touched(["prompts/summarization-howto.yaml", "README.md"], experiments) == ["smoke", "howto"]
    assert touched(["datasets/prompts/x.yaml", "prompts/notes.txt"], experiments) == []


def _workflow() -> dict[str, Any]:
    return dict(yaml.safe_load((FOLDER / "evidence.yml").read_text(encoding="utf-8")))


def test_the_workflow_runs_on_changed_prompts_may_comment_and_posts_after_comparing() -> None:
    flow = _workflow()
    on = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on["pull_request"]["paths"] == ["prompts/**"]
    assert flow["permissions"]["pull-requests"] == "write"
    runs = [str(step.get("run", "")) for step in flow["jobs"]["evidence"]["steps"]]
    compare = next(i for i, r in enumerate(runs) if "scoregate compare" in r)
    post = next(i for i, r in enumerate(runs) if "post_evidence.py" in r)
    assert compare < post and "--markdown" in runs[compare] and "$GITHUB_STEP_SUMMARY" in runs[compare]


def test_each_scoregate_command_in_the_workflow_is_the_real_cli() -> None:
    script = "\n".join(str(step.get("run", "")) for step in _workflow()["jobs"]["evidence"]["steps"])
    commands = []
    for line in script.splitlines():
        for part in line.replace("$(", "\n").replace(")", "\n").replace("|", "\n").splitlines():
            if part.strip().startswith("scoregate "):
                words = shlex.split(part.strip())
                commands.append([w if not w.startswith("$") else "x" for w in words[1:]])
    assert len(commands) == 3, commands
    for args in commands:
        parse_cli(args)
    assert json.dumps(commands).count("--markdown") == 1
