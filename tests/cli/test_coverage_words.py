"""`scoregate coverage` at 80 columns: its words agree with its numbers (one trace, one cluster)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import scoregate.app as facade
from scoregate.app.coverage import Cluster, Coverage
from support.projects import CliResult


def test_one_uncovered_trace_in_one_cluster_is_said_in_the_singular(
    scoregate: Callable[..., CliResult], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured = Coverage("smoke_v1", "counters", 90, "summarization-catchup@1", items=6, traces=1, covered=0)
    measured.clusters.append(Cluster(1, "e43643c5a1f261d30a80761dac433b06", '{"title": "Hostile call"}'))

    def measure(*_args: Any, **_kwargs: Any) -> Coverage:
        return measured

    monkeypatch.setattr(facade, "measure_coverage", measure)
    result = scoregate("coverage", "smoke_v1")

    assert result.code == 0, result.output
    assert "0 of 1 trace covered" in result.output, result.output
    assert "uncovered: 1 trace in 1 cluster" in result.output and "1 traces" not in result.output, result.output
