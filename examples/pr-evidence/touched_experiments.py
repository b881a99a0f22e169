"""Print the experiments a pull request's changed prompts touch, space-separated (none: an empty line).

    python examples/pr-evidence/touched_experiments.py origin/main

A prompt is `prompts/<name>.yaml`; an experiment touches it when `scoregate run --json` lists the name among its
prompts (a routed experiment lists each route's). Standard library and git only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any


def changed_prompts(paths: Iterable[str]) -> set[str]:
    """Return the names of the prompt files among the changed paths."""
    return {
        PurePosixPath(p).stem
        for p in paths
        if PurePosixPath(p).parent.as_posix() == "prompts" and p.endswith((".yaml", ".yml"))
    }


def touched(paths: Iterable[str], experiments: list[dict[str, Any]]) -> list[str]:
    """Return the experiments (in scoregate.yaml's order) whose prompts include a changed one."""
    names = changed_prompts(paths)
    return [e["name"] for e in experiments if names & set(e.get("prompts", []))]


def main(argv: list[str]) -> int:
    """Print the touched experiments for the diff against the base ref argv[1]."""
    if len(argv) != 2:
        print("usage: touched_experiments.py BASE_REF  (e.g. origin/main)", file=sys.stderr)
        return 2
    diff = subprocess.run(["git", "diff", "--name-only", f"{argv[1]}...HEAD"], capture_output=True, text=True)
    if diff.returncode != 0:
        print(f"error: git diff against {argv[1]} failed: {diff.stderr.strip()} (checkout with fetch-depth: 0)",
              file=sys.stderr)  # fmt: skip
        return 1
    listed = subprocess.run(["scoregate", "run", "--json"], capture_output=True, text=True)
    if listed.returncode != 0:
        print(f"error: `scoregate run --json` failed: {listed.stderr.strip()}", file=sys.stderr)
        return 1
    print(" ".join(touched(diff.stdout.split(), json.loads(listed.stdout))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
