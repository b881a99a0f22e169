"""`make setup`'s llama-cpp-python build reports its step, its share of the compilation and the time spent."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def load_build_tool():  # type: ignore[no-untyped-def]
    """Import tools/build_llama_wheel.py (a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("build_llama_wheel", REPO / "tools" / "build_llama_wheel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_llama_wheel"] = module
    spec.loader.exec_module(module)
    return module


def pip_output(total: int = 193) -> list[str]:
    """Lines shaped like `pip wheel -v` building llama-cpp-python with scikit-build-core and Ninja."""
    lines = [
        "Collecting llama-cpp-python==0.3.36\n",
        "  Getting requirements to build wheel: started\n",
        "  *** Configuring CMake...\n",
        "  -- The C compiler identification is GNU 12.2.0\n",
        "  *** Building project with Ninja...\n",
    ]
    for step in range(1, total + 1):
        source = f"/tmp/pip-wheel-x/vendor/llama.cpp/ggml/src/file{step}.cpp"
        lines.append(f"  [{step}/{total}] /usr/bin/g++ -O3 -o build/file{step}.cpp.o -c {source}\n")
    lines += ["  *** Installing project into wheel...\n", "  Created wheel for llama-cpp-python: filename=x.whl\n"]
    return lines


def test_the_build_prints_each_step_and_each_tenth_of_the_compilation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = load_build_tool()
    log = tmp_path / "build.log"
    lines = pip_output()
    tool.report_progress(iter(lines), log, started=0.0)
    printed = capsys.readouterr().out.splitlines()
    steps = [line.split("] ", 1)[1] for line in printed]
    assert steps[:3] == ["fetching the source", "preparing the build", "configuring (CMake)"]
    compiling = [s for s in steps if s.startswith("compiling ")]
    assert [int(s.split()[1].rstrip("%")) // 10 for s in compiling] == list(range(11))
    assert compiling[-1] == "compiling 100% (file193.cpp)"
    assert steps[-2:] == ["packaging the wheel", "wheel built"]
    assert all(line.startswith("  [") and "m" in line.split("]")[0] for line in printed)
    assert len(printed) < 25, "one line per step and per tenth, not one per compiler call"
    assert log.read_text(encoding="utf-8") == "".join(lines)


def test_make_style_percent_lines_are_read_too() -> None:
    tool = load_build_tool()
    assert tool.compile_percent("[ 35%] Building CXX object vendor/llama.cpp/src/llama.cpp.o\n") == 35
    assert tool.compile_percent("[12/193] /usr/bin/g++ -c ops.cpp\n") == 6
    assert tool.compile_percent("-- Configuring done\n") is None


def test_elapsed_reads_as_minutes_and_seconds() -> None:
    tool = load_build_tool()
    assert tool.elapsed(0) == "0m00s"
    assert tool.elapsed(27 * 60 + 5.9) == "27m05s"
