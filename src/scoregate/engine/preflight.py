"""The models' one-token check, run in a thread so its network wait overlaps the rest of a run's start."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from scoregate.calls.caller import ModelCaller
from scoregate.catalog.config_models import Settings
from scoregate.catalog.models import ModelSpec
from scoregate.providers.base import ProviderContext
from scoregate.store.records import CallRecord


def load_http_transport() -> None:
    """Import what an HTTP client loads on its first request (httpcore2, anyio's asyncio backend, h11).

    Done in the calling thread: imported in the check's thread instead, they would compete for the GIL with
    the main thread's imports and hold the check's request back until those end.
    """
    import anyio._backends._asyncio  # noqa: F401
    import h11  # noqa: F401
    import httpcore2  # noqa: F401


class BackgroundPreflight:
    """`ModelCaller.preflight` on its own caller, event loop and thread; `wait()` re-raises what it raised."""

    def __init__(
        self,
        models: dict[str, ModelSpec],
        names: Iterable[str],
        *,
        default_judge: str,
        project_root: Path,
        settings: Settings | None = None,
        first: Callable[[], None] | None = None,
    ) -> None:
        self._first = first
        """Run in the check's thread before its first request (the sinks' checks); what it raises ends the check."""
        context = ProviderContext(project_root, settings or Settings())
        self._caller = ModelCaller(models, default_judge=default_judge, context=context)
        self._names = list(names)
        self._error: BaseException | None = None
        self.records: list[CallRecord] = []
        """One record per request sent (purpose `model_check`): the run keeps them for its per-call telemetry."""
        self._thread = threading.Thread(target=self._check, name="scoregate-preflight", daemon=True)

    def start(self) -> BackgroundPreflight:
        """Start the check and return self. The models' providers (their modules, their HTTP clients) are built
        here, in the calling thread, like the transport: built in the check's thread, they would wait there for the
        GIL behind the caller's imports (~0.1 s before its request went out). A provider that cannot be built
        raises here, as it would from `wait()`."""
        load_http_transport()
        for name in dict.fromkeys(self._names):
            self._caller.provider(name)
        self._thread.start()
        return self

    def wait(self, *, every_s: float | None = None, beat: Callable[[float, str], None] | None = None) -> None:
        """Wait for the check to end; raise its error (ProviderUnavailable names the model and the fix). Every
        `every_s` seconds of waiting, `beat(seconds waited, the model and endpoint it waits on)`."""
        started = time.monotonic()
        while True:
            self._thread.join(every_s if beat is not None else None)
            if not self._thread.is_alive():
                break
            if beat is not None:
                beat(time.monotonic() - started, self.waiting_on())
        if self._error is not None:
            raise self._error

    def waiting_on(self) -> str:
        """The model whose check has not answered yet, and where: `local at http://127.0.0.1:8765/v1`."""
        pending = [r for r in list(self.records) if r.ended_at is None]
        if not pending:
            return ", ".join(self._names)
        return f"{pending[-1].model_name} at {pending[-1].endpoint}"

    def _check(self) -> None:
        try:
            if self._first is not None:
                self._first()
            asyncio.run(self._caller.preflight(self._names, records=self.records))
        except BaseException as exc:  # handed to the main thread by wait()
            self._error = exc
