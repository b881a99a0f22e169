"""The forecast of a run with a cascade judge counts its first judge's samples."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.forecast_runs import ITEMS, run_cli
from support.forecast_runs import priced as priced  # the fixture


def test_a_cascade_judge_s_first_judge_is_forecast_at_its_samples_per_item(
    priced: Path, edit_yaml: Callable[[Path, Callable[[Any], None]], None]
) -> None:
    def cheap(config: dict[str, Any]) -> None:
        config["models"]["cheap"] = {**config["models"]["scripted"], "model": "cheap-1"}

    def cascade(judge: dict[str, Any]) -> None:
        judge["cascade"] = {"first_model": "cheap", "samples": 5, "target": 0.8}

    edit_yaml(priced / "scoregate.yaml", cheap)
    edit_yaml(priced / "evaluators" / "ev_actionability_v1.yaml", cascade)
    shown = run_cli(priced, "run", "smoke", "--dry-run", "--json")
    assert shown.code == 0, shown.output
    groups = {
        g["model"]: g["calls"] for g in json.loads(shown.out)["groups"] if g["stage"] == "judge:ev_actionability_v1"
    }
    assert groups == {"scripted": ITEMS, "cheap": 5 * ITEMS}  # the strong judge counted on every item: an upper bound
