"""The tests have rooms: tests/<room>/ mirrors src/scoregate/, plus e2e/ (whole runs) and house/ (the repository's
rules); doubles and shared helpers live in the tests/support package. No test file sits flat in tests/."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
SOURCE = REPO / "src" / "scoregate"
OWN_ROOMS = {"e2e", "house", "support"}  # support/ is also the room of scoregate.support's tests
DATA = {"runs_before_schema_version"}


def test_no_test_file_sits_flat_in_tests() -> None:
    assert sorted(path.name for path in TESTS.glob("test_*.py")) == []


def test_every_room_mirrors_a_package_of_scoregate_or_is_one_of_the_suite_s_own() -> None:
    packages = {path.parent.name for path in SOURCE.glob("*/__init__.py")}
    rooms = {path.name for path in TESTS.iterdir() if path.is_dir() and not path.name.startswith((".", "__"))}
    assert rooms - DATA - OWN_ROOMS <= packages, sorted(rooms - DATA - OWN_ROOMS - packages)


def test_test_file_names_are_unique_across_rooms() -> None:
    """pytest imports a room's test files by their base name (rooms are not packages): two alike would clash."""
    names = [path.name for path in TESTS.rglob("test_*.py") if "plugin_dist" not in path.parts]
    assert sorted(name for name in set(names) if names.count(name) > 1) == []


def planned(target: str) -> str:
    """Return the commands `make TARGET` would run (a dry run), outside any make this test runs in."""
    outer_make = {"MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES"}
    env = {key: value for key, value in os.environ.items() if key not in outer_make}
    return subprocess.run(
        ["make", "--dry-run", "--no-print-directory", target],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
    ).stdout


def test_make_test_fast_runs_every_room_but_the_end_to_end_one_and_the_scale_tests() -> None:
    pytest_lines = [line for line in planned("test-fast").splitlines() if "pytest" in line]
    assert len(pytest_lines) == 1 and pytest_lines[0].endswith('--ignore=tests/e2e -m "not scale"'), pytest_lines


def test_make_test_all_leaves_out_no_room_and_no_marker() -> None:
    pytest_lines = [line for line in planned("test-all").splitlines() if "pytest" in line]
    assert len(pytest_lines) == 1 and "--ignore" not in pytest_lines[0] and " -m " not in pytest_lines[0], pytest_lines


def test_the_langfuse_passes_run_every_langfuse_test_in_whatever_room_it_lives() -> None:
    langfuse_files = {
        str(path.relative_to(REPO))
        for path in TESTS.rglob("test_*.py")
        if "langfuse" in path.name or path.name in ("test_scores_import.py", "test_promotion.py")
    }
    pytest_line = next(line for line in planned("test-langfuse-old").splitlines() if "pytest" in line)
    assert set(pytest_line.split()) >= langfuse_files, sorted(langfuse_files - set(pytest_line.split()))
