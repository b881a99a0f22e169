"""YAML files are read with bounds: an alias bomb and an oversized file are refused at once, naming the file, by
the real executable in bounded memory, before any run exists."""

from __future__ import annotations

import resource
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import yaml

from support.projects import SCOREGATE_BIN, Runs
from support.scripted_openai import ScriptedOpenAI
from support.yaml_bombs import billion_laughs

MEMORY_CAP = 2 * 1024**3
"""Address space the child may use, so the test itself cannot exhaust the machine when the bound is missing."""


def scoregate_bounded(project: Path, *args: str, timeout: float = 120) -> tuple[int, str, float, float]:
    """Run the executable with MEMORY_CAP; return (exit code, output, seconds, its peak resident MB)."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as out:
        process = subprocess.Popen(
            [str(SCOREGATE_BIN), *args, "-C", str(project)], stdout=out, stderr=subprocess.STDOUT, preexec_fn=cap
        )
        peak = PeakResident(process.pid)
        peak.start()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        peak.join()
        out.seek(0)
        output = out.read()
    return process.returncode, " ".join(output.split()), time.monotonic() - started, peak.mb


class PeakResident(threading.Thread):
    """Follow a child's own high-water mark (VmHWM) until it exits.

    `wait4`'s ru_maxrss is no measure here: a forked child carries the resident size of the pytest process that
    forked it into its maximum, so it reads several hundred MB late in a long suite. VmHWM belongs to the
    executable's own address space, made at exec.
    """

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.status = Path(f"/proc/{pid}/status")
        self.mb = 0.0

    def run(self) -> None:
        while True:
            try:
                text = self.status.read_text(encoding="utf-8")
            except OSError:  # the process is gone
                return
            if "State:\tZ" in text:
                return
            for line in text.splitlines():
                if line.startswith("VmHWM:"):
                    self.mb = max(self.mb, int(line.split()[1]) / 1024)
            time.sleep(0.02)


def put_bomb_in_prompt(project: Path) -> Path:
    path = project / "prompts" / "summarization-catchup.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.endswith("variables:\n  max_words_tldr: 80\n")  # the last mapping: the bomb goes into it
    path.write_text(text + billion_laughs("  "), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", [("validate",), ("run", "counters", "--no-mlflow")])
def test_an_alias_bomb_in_a_prompts_variables_is_refused_fast_in_bounded_memory(
    project_dir: Path, runs: Runs, scripted_server: ScriptedOpenAI, command: tuple[str, ...]
) -> None:
    path = put_bomb_in_prompt(project_dir)

    code, output, seconds, peak = scoregate_bounded(project_dir, *command)

    assert code == 1, output
    assert 0 < peak < 400, peak  # MB: what the executable needs to start, nothing expanded
    assert f"{path}: aliases (*name) expand this file by" in output and "(an alias bomb?)" in output, output
    assert "Traceback" not in output and "MemoryError" not in output
    assert seconds < 30  # the executable's start included; the check itself takes milliseconds
    assert runs.ids() == [] and scripted_server.requests == []


def test_a_yaml_file_over_the_size_limit_is_refused_unread(project_dir: Path, runs: Runs) -> None:
    path = project_dir / "prompts" / "summarization-catchup.yaml"
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    spec["description"] = "a long description. " * 150_000  # 3 MB
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")

    code, output, seconds, _peak = scoregate_bounded(project_dir, "validate")

    assert code == 1, output
    assert f"{path}: more than 1,048,576 bytes, the most a scoregate YAML file may have" in output
    assert seconds < 30 and runs.ids() == []
