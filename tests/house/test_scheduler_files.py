"""The scheduler files users copy (examples/schedulers/) parse; every scoregate command in them is the real CLI's."""

from __future__ import annotations

import re
import shlex
import subprocess
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from scoregate.cli import app
from support.markdown_docs import REPO, parse_cli

FOLDER = REPO / "examples" / "schedulers"
VARIABLE = re.compile(r"\$\{\{[^}]*\}\}|\$\{[A-Za-z_]+[^}]*\}|\$\([A-Za-z_]+\)|\$[A-Za-z_]+")


def _words(command: str) -> list[str]:
    """A shell command line as argv, every variable replaced by a sample value (`0/4` where a shard is built)."""
    command = command.replace('"${{ matrix.index }}/$SHARDS"', "0/4")
    return shlex.split(VARIABLE.sub("x", command))


def _scoregate_lines(text: str) -> list[list[str]]:
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        line = line.strip()
        if line.startswith("scoregate "):
            out.append(_words(line)[1:])
        for wrapped in re.findall(r'--wrap "([^"]+)"', line):
            out.append(_words(wrapped)[1:])
    return out


def _github() -> dict[str, Any]:
    return dict(yaml.safe_load((FOLDER / "github-actions.yml").read_text(encoding="utf-8")))


def _kubernetes() -> list[dict[str, Any]]:
    return list(yaml.safe_load_all((FOLDER / "kubernetes.yaml").read_text(encoding="utf-8")))


def _commands() -> list[list[str]]:
    github = [
        _words(step["run"])[1:]
        for job in _github()["jobs"].values()
        for step in job["steps"]
        if str(step.get("run", "")).startswith("scoregate ")
    ]
    kubernetes = [
        [VARIABLE.sub("x", word) for word in container["command"][1:]]
        for doc in _kubernetes()
        if doc["kind"] == "Job"
        for container in doc["spec"]["template"]["spec"]["containers"]
    ]
    slurm = _scoregate_lines((FOLDER / "slurm.sh").read_text(encoding="utf-8"))
    return github + kubernetes + slurm


def test_the_github_workflow_shards_in_a_matrix_uploads_each_shard_and_always_merges() -> None:
    jobs = _github()["jobs"]
    assert jobs["shard"]["strategy"]["fail-fast"] is False
    upload = [s for s in jobs["shard"]["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert upload and upload[0]["if"] == "always()" and "shards" in upload[0]["with"]["path"]
    assert jobs["merge"]["needs"] == "shard" and jobs["merge"]["if"] == "always()"
    merge = [s["run"] for s in jobs["merge"]["steps"] if "scoregate merge" in str(s.get("run", ""))]
    assert merge and "--fail-on-gates" in merge[0]
    assert len(jobs["shard"]["strategy"]["matrix"]["index"]) == int(_github()["env"]["SHARDS"])


def test_the_kubernetes_files_are_an_indexed_job_and_a_merge_job_on_one_volume() -> None:
    docs = {doc["metadata"]["name"]: doc for doc in _kubernetes()}
    shards, merge = docs["eval-shards"]["spec"], docs["eval-merge"]["spec"]
    assert shards["completionMode"] == "Indexed" and "backoffLimitPerIndex" in shards
    env = {e["name"]: e.get("value") for e in shards["template"]["spec"]["containers"][0]["env"]}
    assert env["SCOREGATE_SHARDS"] == str(shards["completions"])
    claims = {
        volume["persistentVolumeClaim"]["claimName"]
        for spec in (shards, merge)
        for volume in spec["template"]["spec"]["volumes"]
    }
    assert claims == {docs["scoregate-runs"]["metadata"]["name"]}


def test_the_slurm_script_is_valid_bash_with_an_array() -> None:
    path = FOLDER / "slurm.sh"
    subprocess.run(["bash", "-n", str(path)], check=True)
    assert re.search(r"^#SBATCH --array=0-\d+$", path.read_text(encoding="utf-8"), re.MULTILINE)


def test_each_file_runs_shards_and_a_merge() -> None:
    commands = _commands()
    assert sum(1 for c in commands if c[0] == "run" and "--shard" in c) == 3
    assert sum(1 for c in commands if c[0] == "merge") == 3


@pytest.mark.parametrize("args", _commands(), ids=lambda a: " ".join(a)[:50])
def test_each_scoregate_command_is_the_real_cli(args: list[str]) -> None:
    parse_cli(args)  # an unknown command or option, or a bad value, raises here
    help_text = CliRunner().invoke(app, [args[0], "--help"], env={"COLUMNS": "200"}).output
    for option in (a.split("=")[0] for a in args if a.startswith("--")):
        assert option in help_text, f"`scoregate {args[0]}` has no {option}"


def test_the_docs_name_the_three_files() -> None:
    page = (REPO / "docs" / "running" / "shards.md").read_text(encoding="utf-8")
    for path in sorted(FOLDER.iterdir()):
        assert f"examples/schedulers/{path.name}" in page


def test_the_readme_says_when_to_shard_and_links_the_page_and_the_files() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Scale out: shards", 1)[1].split("\n## ", 1)[0]
    assert "(docs/running/shards.md)" in section
    assert all(f"(examples/schedulers/{path.name})" in section for path in FOLDER.iterdir())
    assert "Don't shard when one process already drives the provider's rate limit" in section
    assert "scoregate merge" in section and "--shard" in section
