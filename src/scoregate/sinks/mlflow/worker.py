"""The MLflow mirror's own process: `python -m scoregate.sinks.mlflow.worker` reads one request (a JSON line on
stdin), does it with MLflow's client and writes one answer (a JSON line on stdout).

Importing MLflow costs ~200 MB (it loads pandas, pyarrow, sqlalchemy, alembic...). In a child process that memory
is given back when the mirror ends, and the command that ran the items never holds it (`process.py` is the
parent's side). The requests are what `MlflowSink` asks of MLflow: `mirror` a run (with its evaluation rows when
asked), `set_tags` on its MLflow run (an invalidation, the other mirrors' links). The parent's copy of the run
record travels in the request, so the run's files are read once per mirror, as in one process.

The worker ends when its parent does: a thread waits for stdin to close, which happens when the parent exits or is
killed, and stops the worker at once. A kill of either process therefore leaves what a kill of one process would
(a mirror found again by its tag on the next sync), never two writers of the same run.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.sinks.contract import RunRecord
from scoregate.store.invalidation import invalidation_tags
from scoregate.store.run_store import RunStore

PARENT_GONE = 70
"""The worker's exit status when its parent went away before it answered."""


def error_payload(exc: BaseException) -> dict[str, Any]:
    """An exception as the answer carries it: type, message and, for a ScoregateError, where, hint and exit code."""
    if isinstance(exc, ScoregateError):
        return {"type": type(exc).__name__, "message": exc.message, "scoregate": True, "where": exc.where,
                "hint": exc.hint, "exit_code": int(exc.exit_code)}  # fmt: skip
    if isinstance(exc, OSError) and exc.errno is not None:
        paths = {"filename": _path(exc.filename), "filename2": _path(exc.filename2)}
        return {"type": type(exc).__name__, "message": str(exc), "scoregate": False, "errno": exc.errno,
                "strerror": exc.strerror, **paths}  # fmt: skip
    return {"type": type(exc).__name__, "message": str(exc), "scoregate": False}


def _path(name: object) -> str | None:
    return None if name is None else os.fsdecode(name) if isinstance(name, bytes | str) else str(name)


def _record(data: dict[str, Any]) -> RunRecord:
    from scoregate.store.record import Manifest, RunSummary

    summary = data.get("summary")
    return RunRecord(Manifest.model_validate(data["manifest"]), RunSummary.model_validate(summary) if summary else None)


def _rows_error(exc: Exception, run_id: str) -> BaseException:
    """What `mlflow-sync --eval-rows` says when the rows failed: MLflow's refusal in words, else the error itself."""
    from mlflow.exceptions import MlflowException

    if isinstance(exc, MlflowException):
        return ScoregateError(
            f"MLflow refused the evaluation rows of run {run_id}: {exc.message}",
            hint="the run itself is mirrored; report this with the message above",
        )
    return exc


def mirror(request: dict[str, Any]) -> dict[str, Any]:
    """Create or update the run's MLflow run (and its evaluation rows when asked); return its id, whether it was
    created now, and the rows' fate."""
    from scoregate.sinks.mlflow.run_mirror import mirror_run_created

    root, store = Path(request["project_root"]), RunStore(Path(request["run_dir"]))
    run_id, created = mirror_run_created(store, project_root=root, record=_record(request["record"]))
    answer: dict[str, Any] = {"run_id": run_id, "created": created}
    answer.update(item_rows=None, rows_problem=None, rows_error=None)
    if request.get("item_rows"):
        from scoregate.sinks.mlflow.eval_rows import log_item_rows

        try:
            answer["item_rows"] = log_item_rows(store, project_root=root, mlflow_run_id=run_id)
        except Exception as exc:  # the run is mirrored; `mlflow-sync --eval-rows` writes the rows again
            answer["rows_problem"] = f"{type(exc).__name__}: {exc}"
            answer["rows_error"] = error_payload(_rows_error(exc, store.run_id))
    return answer


def set_tags(request: dict[str, Any]) -> dict[str, Any]:
    """Set tags on an MLflow run: the invalidation record's (`invalidation`) or the given ones (`tags`)."""
    from scoregate.sinks.mlflow.client import project_client

    client = project_client(Path(request["project_root"]))
    tags = invalidation_tags(request["invalidation"]) if "invalidation" in request else request["tags"]
    for key, value in tags.items():
        client.set_tag(request["mlflow_run_id"], key, value)
    return {}


ACTIONS = {"mirror": mirror, "set_tags": set_tags}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """Do one request; return its answer (`ok` with the action's result); raise what the action raised."""
    return {"ok": ACTIONS[request["action"]](request)}


def _exit_when_the_parent_goes(stdin: int) -> None:
    while os.read(stdin, 4096):  # empty at end of file: the parent closed the pipe, or died and the kernel closed it
        pass
    os._exit(PARENT_GONE)


def answer_one_request() -> int:
    """Read one request from stdin, write its answer (or the error it raised) as one JSON line to stdout."""
    request = json.loads(sys.stdin.buffer.readline())
    watch = threading.Thread(target=_exit_when_the_parent_goes, args=(sys.stdin.fileno(),), daemon=True)
    watch.start()  # the raw descriptor, not sys.stdin: a thread blocked in it must not hold sys.stdin's lock at exit
    reply = os.dup(1)
    os.dup2(2, 1)  # whatever MLflow prints goes to stderr: stdout carries the answer alone
    try:
        result = answer(request)
    except BaseException as exc:  # handed to the parent, which raises it there
        result = {"error": error_payload(exc)}
    with os.fdopen(reply, "w", encoding="utf-8") as out:
        out.write(json.dumps(result, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(answer_one_request())
