"""Build the llama-cpp-python wheel for `make setup`, printing which step runs and the time spent so far.

pip's own output is either silent (`-q`) or thousands of compiler lines; this runs `pip wheel -v`, keeps
the whole output in a log file beside the wheel, and prints one line per step and per 10% of the
compilation (and a heartbeat each minute when nothing changes), so a slow build on a busy machine is
visibly making progress. On failure it prints the last lines of the log and the log's path.

Standard library only: it runs with the new virtual environment's Python before anything is installed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

HEARTBEAT_S = 60.0
TAIL_LINES = 40
NINJA_STEP = re.compile(r"^\s*\[(\d+)/(\d+)\]\s")
"""Ninja's `[12/193] /usr/bin/g++ ... -c .../ops.cpp` (scikit-build-core builds with Ninja)."""
MAKE_STEP = re.compile(r"^\s*\[\s*(\d{1,3})%\]\s")
"""Make's `[ 35%] Building CXX object ...`, when CMake falls back to Makefiles."""
SOURCE = re.compile(r"\s-c\s+(\S+)|(?:object|library)\s+(\S+)")
STEPS: tuple[tuple[str, str], ...] = (
    ("Collecting ", "fetching the source"),
    ("Getting requirements to build wheel", "preparing the build"),
    ("Preparing metadata", "preparing the build"),
    ("*** Configuring CMake", "configuring (CMake)"),
    ("*** Building project", "compiling"),
    ("*** Installing project into wheel", "packaging the wheel"),
    ("Created wheel for", "wheel built"),
)


@dataclass
class Progress:
    """What the build is doing now: its step and, while compiling, the percentage CMake reports."""

    step: str = "starting pip"
    percent: int | None = None
    target: str = ""

    def update(self, line: str) -> bool:
        """Read one line of pip's output; True when the step or the tenth of the compilation changed."""
        percent = compile_percent(line)
        if percent is not None:
            source = SOURCE.search(line)
            if source:
                self.target = Path(source.group(1) or source.group(2)).name
            changed = self.step != "compiling" or self.percent is None or percent // 10 > self.percent // 10
            self.step, self.percent = "compiling", percent
            return changed
        for marker, step in STEPS:
            if marker in line and step != self.step:
                self.step = step
                if step != "compiling":
                    self.percent = None
                return True
        return False

    def describe(self) -> str:
        """The step in words, with the percentage and the file being compiled when known."""
        if self.step == "compiling" and self.percent is not None:
            return f"compiling {self.percent}% ({self.target})"
        return self.step


def compile_percent(line: str) -> int | None:
    """The share of the compilation done, from a Ninja or Make progress line; None for any other line."""
    ninja = NINJA_STEP.match(line)
    if ninja:
        return 100 * int(ninja.group(1)) // max(int(ninja.group(2)), 1)
    make = MAKE_STEP.match(line)
    return int(make.group(1)) if make else None


def elapsed(seconds: float) -> str:
    """Minutes and seconds, as `12m05s`."""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


def report_progress(lines: Iterable[str], log: Path, started: float) -> None:
    """Write every line to `log`; print a line per change of step and, when nothing changes, each minute."""
    progress = Progress()
    last_print = started
    with log.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(line)
            now = time.monotonic()
            if progress.update(line) or now - last_print >= HEARTBEAT_S:
                print(f"  [{elapsed(now - started)}] {progress.describe()}", flush=True)
                last_print = now


def pip_lines(command: list[str], env: dict[str, str]) -> Iterator[str]:
    """Run `command` and yield its merged stdout and stderr line by line; raise CalledProcessError on failure."""
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    ) as process:
        assert process.stdout is not None
        yield from process.stdout
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, command)


def main(argv: list[str] | None = None) -> int:
    """Build the wheel into `--wheel-dir`; return pip's exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, help="llama-cpp-python version to build")
    parser.add_argument("--wheel-dir", required=True, type=Path)
    parser.add_argument("--cmake-args", default="", help="CMAKE_ARGS for the build")
    args = parser.parse_args(argv)
    args.wheel_dir.mkdir(parents=True, exist_ok=True)
    log = args.wheel_dir / f"build-{args.version}.log"
    env = dict(os.environ, CMAKE_ARGS=args.cmake_args, FORCE_CMAKE="1")
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    command = [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-cache-dir"]
    command += ["--no-binary", "llama-cpp-python", "-w", str(args.wheel_dir), f"llama-cpp-python=={args.version}"]
    print(
        f"building llama-cpp-python {args.version} with portable CPU flags on {env['CMAKE_BUILD_PARALLEL_LEVEL']} "
        f"cores (once; the whole output goes to {log})",
        flush=True,
    )
    started = time.monotonic()
    try:
        report_progress(pip_lines(command, env), log, started)
    except subprocess.CalledProcessError as failure:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-TAIL_LINES:]
        print("\n".join(tail), file=sys.stderr)
        print(f"llama-cpp-python's build failed after {elapsed(time.monotonic() - started)}", file=sys.stderr)
        print(f"the whole output is in {log}", file=sys.stderr)
        print("it needs a C/C++ compiler and CMake (Debian: apt-get install build-essential cmake)", file=sys.stderr)
        return failure.returncode or 1
    print(f"  [{elapsed(time.monotonic() - started)}] llama-cpp-python {args.version} built", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
