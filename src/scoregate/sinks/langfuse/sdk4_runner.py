"""What SDK 4's experiment runner needs to mirror a run exactly once: a fixed experiment id, no second run item.

SDK 4 takes no experiment id (without a dataset it draws a random one) and posts one dataset run item per
item to POST /api/public/dataset-run-items, which takes no id of ours: the server gives each row a new
random id (its code: "we do not accept user defined ids for dataset run items"). A re-mirror after a lost
`runs/<id>/langfuse.json` therefore stored a second row per item (18 rows for 9 items on a v4.16 server,
whose API showed 9). Here the runner gets the experiment id derived from the run, and the run item the
server already holds for the same dataset item and trace instead of a new one. SDK 5 needs neither.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from scoregate.integrations.langfuse.client import SDK_MAJOR
from scoregate.integrations.langfuse.mirror_state import experiment_id_for
from scoregate.integrations.langfuse.remote import is_not_found

if TYPE_CHECKING:
    from langfuse import Langfuse

PAGE_LIMIT = 50
langfuse_logger = logging.getLogger("langfuse")  # what the mirror reports as SDK warnings


@contextmanager
def sdk4_runner(lf: Langfuse, run_id: str, dataset_id: str | None, run_name: str) -> Iterator[None]:
    """Inside: SDK 4's runner uses the run's derived experiment id and reuses the run's stored run items."""
    if SDK_MAJOR >= 5:
        yield
        return
    with _fixed_experiment_id(lf, run_id), _known_run_items(lf, dataset_id, run_name):
        yield


@contextmanager
def _fixed_experiment_id(lf: Langfuse, run_id: str) -> Iterator[None]:
    """Derive the experiment id from the run id, so a re-mirror lands in the same experiment."""
    original = getattr(lf, "_create_observation_id", None)
    if original is None:
        yield
        return

    def derived(*, seed: str | None = None) -> str:
        return experiment_id_for(run_id) if seed is None else str(original(seed=seed))

    lf._create_observation_id = derived  # type: ignore[method-assign]
    try:
        yield
    finally:
        del lf._create_observation_id


def stored_run_items(lf: Langfuse, dataset_id: str, run_name: str) -> dict[tuple[str, str], Any]:
    """The dataset run's items the server lists, by (dataset item id, trace id); none when the run is new."""
    found: dict[tuple[str, str], Any] = {}
    api: Any = lf.api  # SDK 4's client (SDK 5 has no dataset run items API)
    page = 1
    while True:
        try:
            listed = api.dataset_run_items.list(
                dataset_id=dataset_id, run_name=run_name, page=page, limit=PAGE_LIMIT,
                request_options={"max_retries": 1},
            )  # fmt: skip
        except Exception as exc:  # a new run (404), or no answer: nothing known to reuse, the runner posts
            if not is_not_found(exc):
                langfuse_logger.warning("cannot list the run items of dataset run %r: %s", run_name, exc)
            return found
        found.update({(row.dataset_item_id, row.trace_id or ""): row for row in listed.data})
        if not listed.data or page >= (listed.meta.total_pages or 0):
            return found
        page += 1


@contextmanager
def _known_run_items(lf: Langfuse, dataset_id: str | None, run_name: str) -> Iterator[None]:
    """Answer the runner's run-item posts with the rows the server already stores for the same item and trace."""
    if dataset_id is None:
        yield
        return
    known = stored_run_items(lf, dataset_id, run_name)
    api: Any = lf.api
    client = api.dataset_run_items
    post = client.create

    def create(**request: Any) -> Any:
        stored = known.get((str(request.get("dataset_item_id")), str(request.get("trace_id") or "")))
        return stored if stored is not None else post(**request)

    client.create = create
    try:
        yield
    finally:
        del client.create
