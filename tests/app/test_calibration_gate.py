"""A gate that requires a calibrated judge: incomplete without a calibration, and when the judge changed since."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.projects import CliResult, Runs


def require_calibration(edit_yaml: Callable[..., None], project_dir: Path, floor: float) -> None:
    """Make the faithfulness gate also require a calibrated faithfulness judge."""

    def change(config: dict[str, Any]) -> None:
        for gate in config["gates"]:
            if gate["name"] == "faithfulness":
                gate["requires_calibration"] = {"evaluator": "ev_faithfulness_v1", "floor": floor}

    edit_yaml(project_dir / "scoregate.yaml", change)


def faithfulness_gate(runs: Runs) -> dict[str, Any]:
    return next(g for g in runs.summary()["gates"] if g["name"] == "faithfulness")


def test_gate_is_incomplete_while_the_judge_was_never_calibrated(
    scoregate: Callable[..., CliResult], edit_yaml: Callable[..., None], project_dir: Path, runs: Runs
) -> None:
    require_calibration(edit_yaml, project_dir, floor=0.5)

    result = scoregate("run", "smoke", "--no-mlflow", "--fail-on-gates")

    gate = faithfulness_gate(runs)
    assert gate["status"] == "incomplete"
    assert "judge calibration incomplete" in gate["detail"]
    assert result.code == 3
