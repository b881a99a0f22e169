"""The one MLflow client factory: where the tracking store is, and the store created once even when several
runs start at the same moment.

MLflow creates and migrates an embedded sqlite store on its first use. Two processes doing that at once race
on the schema (`table _alembic_tmp_... already exists`): mirrors are lost and the store can be left half
migrated. Here the first use of a sqlite store, and the creation of an experiment, happen under an exclusive
lock on the store's folder, so one process creates and the others wait, then find it made.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SQLITE = "sqlite:///"


def tracking_uri(project_root: Path) -> str:
    """Return `MLFLOW_TRACKING_URI`, or the embedded default `sqlite:///<project>/mlflow.db`."""
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{project_root.resolve() / 'mlflow.db'}"


@contextmanager
def creation_lock(uri: str) -> Iterator[None]:
    """Hold an exclusive lock on the folder of a sqlite store (no lock for a server URI)."""
    if not uri.startswith(SQLITE):
        yield
        return
    folder = Path(uri.removeprefix(SQLITE)).parent
    folder.mkdir(parents=True, exist_ok=True)
    handle = os.open(folder, os.O_RDONLY)  # a folder can be locked: no stray lock file beside mlflow.db
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        os.close(handle)


def quiet_mlflow_logs() -> None:
    """Keep MLflow's INFO lines (database set-up, migrations) out of scoregate's output, unless
    MLFLOW_LOGGING_LEVEL asks for them."""
    import logging

    if not os.environ.get("MLFLOW_LOGGING_LEVEL"):
        for name in ("mlflow", "alembic"):
            logging.getLogger(name).setLevel(logging.WARNING)


def tracking_client(uri: str) -> Any:
    """Return an MlflowClient on `uri` whose store exists and is migrated (created here, once, if new).

    The one place scoregate builds an MlflowClient: mirrors, comparisons, promotion evidence all come here."""
    import mlflow
    from mlflow.tracking import MlflowClient

    quiet_mlflow_logs()
    with creation_lock(uri):
        mlflow.set_tracking_uri(uri)
        client = MlflowClient(tracking_uri=uri)
        client.search_experiments(max_results=1)  # the first use creates and migrates the store
    return client


def project_client(project_root: Path) -> Any:
    """Return the MlflowClient of a project's tracking store (`tracking_client(tracking_uri(project_root))`)."""
    return tracking_client(tracking_uri(project_root))
