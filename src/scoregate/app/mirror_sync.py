"""`scoregate sync RUN --to NAME` (and its aliases `mlflow-sync`, `langfuse-sync`): mirror one stored run to some
sinks again, through `mirror_all`; and the check of the sink names a command is given (`--to`, `--no-mirror`)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from scoregate.errors import UsageError
from scoregate.store.lock import SYNC_HINT, RunLock
from scoregate.store.run_store import RunStore

if TYPE_CHECKING:
    from scoregate.sinks.mirror_all import MirrorOutcome


def sink_choice(names: Iterable[str], option: str) -> frozenset[str]:
    """`names` checked against the registered sinks (built-ins and plug-ins); an unknown one is a usage error
    (exit 2) naming `option` and listing the sinks."""
    from scoregate.sinks.registry import sink_names

    known = sink_names()
    chosen = frozenset(names)
    unknown = sorted(chosen - set(known))
    if unknown:
        raise UsageError(
            f"{option} {unknown[0]}: no such sink; the sinks are {', '.join(known)}",
            option=option,
            hint=f"give {option} one of {', '.join(known)}",
        )
    return chosen


def sync_stored_run(
    root: Path, run_id: str, sinks: str | Collection[str] | None = None, *, item_rows: bool = False
) -> MirrorOutcome:
    """Mirror stored run `run_id` to the sinks named in `sinks` (all configured ones when None; a named sink is
    asked even when off, so its own error says what is missing), hand the links made to the other sinks, holding
    the run's lock; the caller raises what went wrong with `outcome.raise_for(name)`."""
    from scoregate.sinks.contract import SinkContext  # the sinks load only when used
    from scoregate.sinks.mirror_all import Mirror, mirror_all

    only = None if sinks is None else sink_choice([sinks] if isinstance(sinks, str) else sinks, "--to")
    store = RunStore.open(root / "runs", run_id)
    with RunLock(store.directory, hint=SYNC_HINT):
        return mirror_all(Mirror(store), SinkContext(root, item_rows=item_rows), only=only)
