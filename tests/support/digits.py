"""Significant digits of a number as MLflow shows it (from test_mlflow_readable)."""

from __future__ import annotations


def significant_digits(value: float) -> int:
    return len(f"{value:.15g}".lstrip("-0.").replace(".", "").rstrip("0"))
