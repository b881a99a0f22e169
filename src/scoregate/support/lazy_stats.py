"""`scipy.stats`, imported on its first use: importing it costs about 60 MB and half a second, and a run imports
modules (judge calibration, drift) that need it only when a judge has a saved calibration."""

from __future__ import annotations

from typing import Any


class _ScipyStats:
    """Stands for the `scipy.stats` module; the first attribute read imports it."""

    def __getattr__(self, name: str) -> Any:
        from scipy import stats as module

        return getattr(module, name)


stats: Any = _ScipyStats()
