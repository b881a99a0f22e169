"""The parent's side of the MLflow mirror's process (`worker.py`): send a request, wait for the answer, raise what
the worker raised as if it had been raised here.

MLflow runs in the worker unless this process has imported it already (a promotion reads MLflow itself; a test
suite holds it): a second copy in a child would only add memory and start-up time.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
from typing import Any

from scoregate.errors import ExitCode, ScoregateError

WORKER = "scoregate.sinks.mlflow.worker"
"""The module the child runs (`python -P -m WORKER`)."""


class MlflowMirrorError(ScoregateError):
    """What the MLflow mirror's process raised (not a ScoregateError nor an OSError), or that it ended without an
    answer: one line for the user, never a traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(message, hint="the run is kept locally: `scoregate mlflow-sync RUN` mirrors it again")


def in_child() -> bool:
    """Whether MLflow work goes to a child process: yes, unless this process holds MLflow already."""
    return "mlflow" not in sys.modules


def ask(request: dict[str, Any]) -> dict[str, Any]:
    """Do `request` (see `worker.ACTIONS`) in the worker process, or here when MLflow is loaded here; return its
    result. Raise what the worker raised (a ScoregateError as one, anything else as MlflowMirrorError), or, here,
    what the action raised."""
    if not in_child():
        from scoregate.sinks.mlflow.worker import ACTIONS

        result: dict[str, Any] = ACTIONS[request["action"]](request)
        return result
    reply, errors = _run_worker(request)
    if reply is None:
        raise MlflowMirrorError(errors)
    if "error" in reply:
        raise rebuilt(reply["error"])
    ok: dict[str, Any] = reply["ok"]
    return ok


def rebuilt(payload: dict[str, Any]) -> BaseException:
    """The exception an answer carries, raised again in this process."""
    if payload.get("scoregate"):
        error = ScoregateError(payload["message"], where=payload.get("where"), hint=payload.get("hint"))
        error.exit_code = ExitCode(payload.get("exit_code", int(ExitCode.ERROR)))
        return error
    if payload.get("errno") is not None:  # a file or the disk: the CLI names the path, as for one in this process
        return OSError(payload["errno"], payload["strerror"], payload.get("filename"), None, payload.get("filename2"))
    return MlflowMirrorError(f"{payload['type']}: {payload['message']}")


def _run_worker(request: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """Run the worker on `request`; return its answer (None when it ended without one) and, without one, why.

    Its stderr (MLflow's warnings) is passed on to ours when it answered; without an answer only its last line is
    kept, in the error, so no traceback reaches the user. Stdin stays open until the worker has exited: it stops
    itself when stdin closes, so a parent killed at any moment takes its worker with it.
    """
    with tempfile.TemporaryFile() as stderr:
        worker = subprocess.Popen(
            [sys.executable, "-P", "-m", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr
        )
        assert worker.stdin is not None and worker.stdout is not None
        try:
            try:
                worker.stdin.write(json.dumps(request, default=str).encode("utf-8") + b"\n")
                worker.stdin.flush()
            except BrokenPipeError:  # it ended at once: its status and stderr say why
                pass
            out = worker.stdout.read()
            status = worker.wait()
        finally:
            if worker.poll() is None:  # we are being stopped (Ctrl-C, SIGTERM): the worker stops too
                worker.kill()
                worker.wait()
            worker.stdin.close()
            worker.stdout.close()
        stderr.seek(0)
        said = stderr.read().decode("utf-8", errors="replace")
    lines = out.decode("utf-8", errors="replace").strip().splitlines()
    if lines:
        try:
            reply: dict[str, Any] = json.loads(lines[-1])
        except ValueError:
            pass
        else:
            sys.stderr.write(said)
            return reply, ""
    last = next((line for line in reversed(said.splitlines()) if line.strip()), "no output")
    return None, f"the MLflow mirror's process ended {_status(status)} before it answered: {last.strip()}"


def _status(status: int) -> str:
    """`with exit status N`, or `killed by SIGKILL` for a signal."""
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"with exit status {status}"
