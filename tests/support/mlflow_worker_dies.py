"""The MLflow mirror's worker, made to die or hang once the MLflow run exists but before it is finished.

`python -m mlflow_worker_dies` (tests/ on PYTHONPATH) runs `scoregate.sinks.mlflow.worker` with MLflow's
`set_terminated` replaced: WORKER_DIES=kill sends itself SIGKILL there; WORKER_DIES=hang writes its pid to
WORKER_PID_FILE and sleeps, so the test can kill the worker's parent at that moment.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from mlflow.tracking import MlflowClient

from scoregate.sinks.mlflow import worker


def _stop_here(self: MlflowClient, *args: Any, **kwargs: Any) -> None:
    if os.environ["WORKER_DIES"] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    Path(os.environ["WORKER_PID_FILE"]).write_text(str(os.getpid()), encoding="utf-8")
    time.sleep(600)


MlflowClient.set_terminated = _stop_here  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(worker.answer_one_request())
