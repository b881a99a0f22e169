"""A calibration request checks itself in the library: a Python caller gets the same refusals as the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scoregate.app.calibration_request import CalibrationRequest
from scoregate.app.calibration_sources import calibrate_file
from scoregate.errors import ExitCode, ScoregateError, UsageError


@pytest.mark.parametrize(
    ("how", "option", "says"),
    [
        ({}, "--run/--file", "give either --run RUN_ID (repeatable) or --file FILE"),
        ({"runs": ("r1",), "file": Path("s.jsonl")}, "--run/--file", "give either --run"),
        ({"file": Path("s.jsonl"), "save": True}, "--save", "use it with --run"),
        ({"runs": ("r1",), "scale": (5, 1)}, "--scale", "--scale 5,1: LOW must be below HIGH"),
        ({"runs": ("r1",), "resamples": 10}, "--resamples", "--resamples 10: at least 100"),
        ({"runs": ("r1",), "judge_key": ""}, "--judge-key", "--judge-key is empty"),
    ],
)
def test_a_bad_combination_is_refused_naming_the_option(how: dict[str, Any], option: str, says: str) -> None:
    keys = {"judge_key": "j", "human_key": "h"}
    with pytest.raises(UsageError) as refused:
        CalibrationRequest(**(keys | how))
    assert refused.value.option == option and says in refused.value.message
    assert refused.value.exit_code == ExitCode.USAGE


def test_the_request_is_frozen_and_a_file_calibration_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(f'{{"j": {j}, "h": {h}}}\n' for j, h in [(1, 1), (2, 2), (3, 2), (3, 3)]), encoding="utf-8")
    request = CalibrationRequest("j", "h", file=path, scale=(1, 3), resamples=200)
    with pytest.raises(AttributeError):
        request.save = True  # type: ignore[misc]

    report = calibrate_file(request).to_dict()

    assert (report["judge_key"], report["human_key"], report["n_pairs"], report["scale"]) == ("j", "h", 4, (1, 3))
    assert report["pooled"]["qwk"]["value"] == pytest.approx(0.8)  # hand-worked in test_calibration.py


def test_the_scale_as_typed_is_parsed_by_the_request_and_a_bad_one_says_how_to_write_it() -> None:
    assert CalibrationRequest("j", "h", runs=("r1",), scale_text="1, 5").scale == (1, 5)
    with pytest.raises(ScoregateError) as refused:
        CalibrationRequest("j", "h", runs=("r1",), scale_text="one to five")
    assert "--scale 'one to five' is not two integers" in refused.value.message
    assert "LOW,HIGH" in (refused.value.hint or "")
