"""`scoregate plan`'s numbers from stored runs, and the run's warning when a gate's margin is below what it detects."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from scoregate.analysis.power import Variance, detectable
from scoregate.app.plan import gate_power_warnings, metric_variance
from support.regression_runs import BASE, METRIC, PROMPT, Gate, promotions, run

NOISE = [0.4, -0.3, 0.35, -0.25, 0.3, -0.4, 0.25, -0.35, 0.4, -0.3, 0.35, -0.25, 0.3, -0.4, 0.25, -0.35]
Z = 1.959964 + 0.841621


def paired_runs(root: Path) -> None:
    promotions(root, (PROMPT, "promote", 3))
    run(root, "prod", BASE, version="3", day=1)
    run(root, "cand", [v + 0.05 + n for v, n in zip(BASE, NOISE, strict=True)], version="4", day=2)


def test_the_variance_of_a_gated_metric_is_paired_with_its_reference(tmp_path: Path) -> None:
    paired_runs(tmp_path)
    from scoregate.store.run_store import RunStore

    current = RunStore.open(tmp_path / "runs", "cand")
    variance, paired_with, notes = metric_variance(tmp_path, current, METRIC, "production")
    assert paired_with == "prod"
    assert variance.between == pytest.approx(statistics.variance(NOISE))  # the differences are 0.05 + noise
    assert variance.items == 16
    assert notes == []  # a regression gate reads repeat 1: repeats are not planned for it


def test_a_margin_below_what_the_run_detects_is_warned_and_a_wide_one_is_not(tmp_path: Path) -> None:
    paired_runs(tmp_path)
    from scoregate.store.run_store import RunStore

    current = RunStore.open(tmp_path / "runs", "cand")
    can = Z * (statistics.variance(NOISE) / 16) ** 0.5  # 0.237
    assert detectable(Variance(statistics.variance(NOISE), None), 16, 1, power=0.8) == pytest.approx(can, rel=1e-5)
    narrow = gate_power_warnings(tmp_path, current, [Gate(margin=0.2)])
    assert narrow == [
        f"gate no_regression_hardcases: margin 0.2 is below the smallest difference this run can detect ({can:.3g} "
        "with power 0.8, 16 items paired with prod); `scoregate plan hardcases --detect 0.2` says how many items "
        "it takes"
    ]
    assert gate_power_warnings(tmp_path, current, [Gate(margin=0.3)]) == []
    assert gate_power_warnings(tmp_path, current, [Gate(margin=0.1, compare_to=None)]) == []
