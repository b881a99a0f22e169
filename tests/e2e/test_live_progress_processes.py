"""Live progress through real processes: progress.json + active-run.json while a run goes; `scoregate runs watch`
follows a live run (or a resume still starting) in another process, and says when that process died."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.projects import DATASET_IDS, SCOREGATE_BIN, CliResult, Runs
from support.scripted_openai import PREFLIGHT, ScriptedOpenAI
from support.stored_items import wait_for_stored_items

Start = Callable[..., "subprocess.Popen[str]"]
Edit = Callable[[Path, Callable[[Any], None]], None]


def wait_for(path: Path, process: subprocess.Popen[str], limit_s: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        if path.is_file():
            return dict(json.loads(path.read_text(encoding="utf-8")))
        time.sleep(0.05)
    raise AssertionError(f"{path} did not appear within {limit_s:.0f}s")


def test_runs_watch_follows_a_live_run_in_another_process_until_it_finishes(
    start_scoregate: Start, scripted_server: ScriptedOpenAI, project_dir: Path, runs: Runs
) -> None:
    scripted_server.latency_s = 1.5  # six items one at a time: about ten seconds to watch
    run = start_scoregate("run", "counters", "--no-mlflow", "--no-cache")
    active = wait_for(project_dir / "runs" / "active-run.json", run)
    progress_path = project_dir / "runs" / active["run_id"] / "progress.json"
    first = json.loads(progress_path.read_text(encoding="utf-8"))
    assert first["status"] == "running" and first["total"] == len(DATASET_IDS) and first["pid"] == run.pid

    watcher = subprocess.run(
        [str(SCOREGATE_BIN), "runs", "watch", "-C", str(project_dir), "--interval", "0.2"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    run.communicate(timeout=60)

    assert watcher.returncode == 0, watcher.stdout + watcher.stderr
    lines = watcher.stdout.splitlines()
    assert lines[0] == f"watching run {active['run_id']}"
    assert any(line.strip().startswith(f"{n}/{len(DATASET_IDS)} items") for n in range(1, 6) for line in lines), lines
    assert lines[-1] == f"run {active['run_id']} finished: {len(DATASET_IDS)}/{len(DATASET_IDS)} items, 0 failed"
    assert all(len(line) <= 80 for line in lines[1:-1])
    progress = [line for line in lines[1:-1] if f"/{len(DATASET_IDS)} items" in line]
    assert len(progress) <= len(DATASET_IDS) + 2, lines  # a line per finished item (and the last), not per ETA tick
    final = json.loads(progress_path.read_text(encoding="utf-8"))
    assert final["status"] == "finished" and final["done"] == len(DATASET_IDS)
    assert final["stages"]["task"]["calls"] == len(DATASET_IDS)
    assert final["tokens"]["total"] > 0 and final["items_per_s"] > 0
    assert json.loads((project_dir / "runs" / "active-run.json").read_text())["status"] == "finished"


def test_progress_file_is_rewritten_every_second_while_no_item_finishes(
    start_scoregate: Start, scripted_server: ScriptedOpenAI, project_dir: Path
) -> None:
    scripted_server.delay_next(4.0)
    run = start_scoregate("run", "counters", "--no-mlflow", "--no-cache", "--limit", "1")
    active = wait_for(project_dir / "runs" / "active-run.json", run)
    path = project_dir / "runs" / active["run_id"] / "progress.json"

    stamps = set()
    for _ in range(5):
        stamps.add(json.loads(path.read_text(encoding="utf-8"))["updated_at"])
        time.sleep(0.6)

    assert len(stamps) >= 4  # a heartbeat twice a second, not only when an item finishes
    assert json.loads(path.read_text(encoding="utf-8"))["done"] == 0
    run.communicate(timeout=60)


def test_runs_watch_says_when_the_process_died(
    start_scoregate: Start,
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    scoregate: Callable[..., CliResult],
) -> None:
    scripted_server.delay_next(30.0, times=6)  # chat requests only: the endpoint check must still answer
    run = start_scoregate("run", "counters", "--no-mlflow", "--no-cache")
    active = wait_for(project_dir / "runs" / "active-run.json", run)
    run.kill()
    run.wait()

    result = scoregate("runs", "watch", active["run_id"])

    assert result.code == 1
    assert f"run {active['run_id']} stopped: its process (pid {run.pid}) is gone" in result.output
    assert f"scoregate run --resume {active['run_id']}" in result.output


def test_runs_watch_follows_a_resume_that_is_still_starting_instead_of_calling_it_interrupted(
    start_scoregate: Start, scripted_server: ScriptedOpenAI, project_dir: Path, runs: Runs, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"]["scripted"].update(timeout_s=30))
    scripted_server.latency_s = 0.5
    first = start_scoregate("run", "counters", "--no-mlflow", "--no-cache")
    run_id = wait_for_stored_items(first, runs, at_least=1)
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=60)
    assert json.loads((runs.root / run_id / "progress.json").read_text())["status"] == "interrupted"
    scripted_server.latency_s = 0.0
    scripted_server.delay_next(6.0, path=PREFLIGHT)  # the resume's model check: its progress file is not yet written
    resume = start_scoregate("run", "--resume", run_id, "--no-mlflow", "--no-cache")
    deadline = time.monotonic() + 60
    while (runs.root / run_id / ".lock").read_text() != str(resume.pid):
        assert resume.poll() is None and time.monotonic() < deadline, resume.communicate()
        time.sleep(0.05)

    watcher = subprocess.run(
        [str(SCOREGATE_BIN), "runs", "watch", run_id, "-C", str(project_dir), "--interval", "0.2"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out, err = resume.communicate(timeout=60)

    assert resume.returncode == 0, out + err
    assert watcher.returncode == 0, watcher.stdout + watcher.stderr
    assert "interrupted" not in watcher.stdout and "resume with" not in watcher.stdout, watcher.stdout
    assert (
        watcher.stdout.splitlines()[-1]
        == f"run {run_id} finished: {len(DATASET_IDS)}/{len(DATASET_IDS)} items, 0 failed"
    )


def run_in_a_terminal(args: list[str], *, columns: int, until: bytes, then: bytes, limit_s: float = 60.0) -> str:
    """Run the real executable on a pseudo-terminal `columns` wide (its controlling terminal, so a typed Ctrl-C
    is echoed as `^C` and signals it as a person's would); type `then` once `until` was printed; return all it
    wrote."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import termios

    pid, master = pty.fork()
    if pid == 0:  # the child: size its terminal, then become scoregate
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        for name in ("COLUMNS", "LINES"):
            os.environ.pop(name, None)
        os.execv(str(SCOREGATE_BIN), [str(SCOREGATE_BIN), *args])
    out, typed = b"", False
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal: it exited
                break
            if not chunk:
                break
            out += chunk
        if not typed and until in out:
            os.write(master, then)
            typed = True
    os.waitpid(pid, 0)
    os.close(master)
    assert typed, out
    return out.decode("utf-8", errors="replace")


def test_ctrl_c_on_a_terminal_leaves_one_bar_with_its_eta_in_the_log_lines_clock(
    scripted_server: ScriptedOpenAI, project_dir: Path, runs: Runs
) -> None:
    from support.tiny_terminal import screen

    scripted_server.latency_s = 0.5
    args = ["run", "counters", "--no-mlflow", "--no-cache", "-C", str(project_dir)]

    def slow_down_after_two() -> None:  # the rest take longer than the test: Ctrl-C meets items in flight
        while len(scripted_server.task_requests()) < 2:
            time.sleep(0.02)
        scripted_server.latency_s = 60

    import threading

    threading.Thread(target=slow_down_after_two, daemon=True).start()
    written = run_in_a_terminal(args, columns=80, until=b"2/6", then=b"\x03")

    lines = screen(written, 80)
    bars = [line for line in lines if line.startswith("running ")]
    assert len(bars) == 1, "\n".join(lines)
    assert re.search(r" 2/6 .* elapsed \d+\.\d s · ETA \d+\.\d s 0 failed", bars[0]), bars[0]
    assert any("interrupted;" in line for line in lines)
