"""The cyclic garbage collector held off while a run starts, and back on once its first request is out.

A run's start (imports, the project's models, the HTTP client) allocates ~100,000 objects that all live on: the
collector's ~100 passes over them before the first request (~20 ms) find nothing to free. `hold_collector` turns it
off as the command starts; `release_collector` freezes what the start built (later passes skip it) and turns it
back on; `end_collector_hold`, when the command returns, also unfreezes it, so that a caller in the same process
(a test, a Python user of `scoregate.cli.main`) finds the collector as it was. Only a hold's own release turns the
collector on: a caller that turned it off keeps it off.
"""

from __future__ import annotations

import gc

_held = False
_froze = False


def hold_collector() -> None:
    """Turn the cyclic collector off until `release_collector()`; nothing when it is off already."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_collector() -> None:
    """End `hold_collector()`: freeze the objects alive now (unless another caller froze some) and turn the
    collector back on; nothing without a hold."""
    global _held, _froze
    if not _held:
        return
    _held = False
    if gc.get_freeze_count() == 0:
        gc.freeze()
        _froze = True
    gc.enable()


def end_collector_hold() -> None:
    """End the hold if still on, and unfreeze what `release_collector` froze: the collector is as before the hold."""
    global _froze
    release_collector()
    if _froze:
        _froze = False
        gc.unfreeze()
