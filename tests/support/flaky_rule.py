"""The flaky-item rule the flaky-item tests run on."""

from __future__ import annotations

EAGER = {"threshold": 0.2, "min_observations": 3}
"""The rule before bench/flaky_defaults.py chose the defaults: one flip in three observations marks an item. These
tests check what a flaky item changes, on histories short enough to read."""
