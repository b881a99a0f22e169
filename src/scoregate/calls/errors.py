"""What a model call raises to the code that asked for it (an evaluator, a pipeline stage)."""

from __future__ import annotations


class ModelCallFailed(Exception):
    """A model call that failed after retries; its telemetry is already recorded."""
