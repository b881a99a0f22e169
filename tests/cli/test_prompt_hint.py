"""The hint `scoregate run` prints when Langfuse has no such prompt names only the options the user gave."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.projects import CliResult


@pytest.fixture
def langfuse_on(fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the Langfuse variables at the fake (which holds no prompt)."""
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)


def words(result: CliResult) -> str:
    return " ".join(result.output.split())


def test_a_missing_prompt_without_a_label_or_version_asked_names_neither(
    scoregate: Callable[..., CliResult], langfuse_on: None
) -> None:
    refused = scoregate("run", "counters", "--no-mlflow")

    assert refused.code == 1, refused.output
    said = words(refused)
    assert "has neither a 'candidate' nor a 'production' version in Langfuse" in said, said
    assert "--prompt-label" not in said and "--prompt-version" not in said, said
    assert said.count("`--prompt-source local`") == 1, said  # how to run the local files, said once


@pytest.mark.parametrize(("given", "other"), [(("--prompt-label", "staging"), "--prompt-version"),
                                              (("--prompt-version", "3"), "--prompt-label")])  # fmt: skip
def test_a_missing_prompt_version_asked_for_names_only_the_option_given(
    scoregate: Callable[..., CliResult], langfuse_on: None, given: tuple[str, str], other: str,
    project_dir: Path, edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> None:  # fmt: skip
    def one_prompt(config: Any) -> None:  # a version number names one prompt's version: no route
        config["experiments"]["counters"]["prompt"] = "summarization-catchup"

    edit_yaml(project_dir / "scoregate.yaml", one_prompt)
    refused = scoregate("run", "counters", "--no-mlflow", *given)

    assert refused.code == 1, refused.output
    said = words(refused)
    assert " ".join(given) in said and other not in said, said


def test_a_version_asked_of_a_run_without_langfuse_names_the_two_options_given(
    scoregate: Callable[..., CliResult],
) -> None:
    refused = scoregate("run", "counters", "--no-langfuse", "--prompt-label", "staging")

    assert refused.code == 1, refused.output
    said = words(refused)
    assert "--prompt-label staging" in said and "--no-langfuse" in said, said
    assert "--prompt-version" not in said and "--prompt-source" not in said, said
