"""The CLI starts without importing the heavy libraries: they load only in the commands that use them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("openai", "scipy", "pandas", "mlflow", "langfuse")


def _imported_after(code: str) -> dict[str, bool]:
    """Run `code` in a fresh interpreter; return which heavy top-level packages ended up in sys.modules."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_cli_imports_no_heavy_library() -> None:
    assert _imported_after("import scoregate.cli") == dict.fromkeys(HEAVY, False)


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["run", "--help"], ["compare", "--help"]])
def test_help_and_version_import_no_heavy_library(args: list[str]) -> None:
    code = "\n".join(
        [
            "import sys",
            f"sys.argv = ['scoregate', *{args!r}]",
            "import scoregate.cli",
            "try:",
            "    scoregate.cli.main()",
            "except SystemExit as exc:",
            "    assert exc.code in (0, None), exc.code",
        ]
    )
    assert _imported_after(code) == dict.fromkeys(HEAVY, False)


def test_the_run_module_imports_neither_the_openai_sdk_nor_scipy_before_the_items() -> None:
    """A run needs scipy only for the summary after its last item, and never the openai SDK (plain HTTP)."""
    imported = _imported_after("import scoregate.experiment, scoregate.providers.registry")
    assert imported["openai"] is False and imported["scipy"] is False
