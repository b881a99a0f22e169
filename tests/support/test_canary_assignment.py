"""The sticky canary assignment apps import: stable, at its share, monotone in the share, and light to import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from scipy import stats

from scoregate.support.canary_assignment import bucket, canary_label

IDS = [f"session-{i}" for i in range(20_000)]


def test_the_same_id_gets_the_same_label_in_another_process() -> None:
    here = [canary_label(i, 0.1, salt="call-summary") for i in IDS[:500]]
    code = (
        "import json, sys; from scoregate.support.canary_assignment import canary_label; "
        "print(json.dumps([canary_label(f'session-{i}', 0.1, salt='call-summary') for i in range(500)]))"
    )
    there = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert here == there
    assert bucket("user-42") == pytest.approx(bucket("user-42")) and 0 <= bucket("user-42") < 1


@pytest.mark.parametrize("share", [0.01, 0.10, 0.5, 0.9])
def test_the_canary_gets_its_share_of_ids(share: float) -> None:
    canary = sum(canary_label(i, share, salt="p") == "canary" for i in IDS)
    assert stats.binomtest(canary, len(IDS), share).pvalue > 0.001, canary


def test_raising_the_share_moves_no_canary_id_back_and_salts_split_apart() -> None:
    at_10 = {i for i in IDS if canary_label(i, 0.10, salt="p") == "canary"}
    at_20 = {i for i in IDS if canary_label(i, 0.20, salt="p") == "canary"}
    assert at_10 < at_20
    other = {i for i in IDS if canary_label(i, 0.10, salt="q") == "canary"}
    assert len(at_10 & other) < 0.2 * len(at_10)  # independent splits overlap by about 10%
    assert all(canary_label(i, 0.0) == "production" and canary_label(i, 1.0) == "canary" for i in IDS[:100])


@pytest.mark.parametrize(("unit_id", "share"), [("", 0.1), ("u", 1.2), ("u", -0.1), ("u", float("nan")), ("u", "10%")])
def test_bad_input_says_what_is_expected(unit_id: str, share: object) -> None:
    with pytest.raises(ValueError, match=r"non-empty string|from 0 to 1"):
        canary_label(unit_id, share)  # type: ignore[arg-type]


def test_an_app_importing_it_loads_nothing_heavy() -> None:
    code = (
        "import sys; import scoregate.support.canary_assignment; "
        "print(' '.join(sorted(m for m in sys.modules if m.startswith(('scoregate', 'numpy', 'typer', 'langfuse', "
        "'mlflow', 'pydantic', 'yaml', 'rich')))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == ["scoregate", "scoregate.support", "scoregate.support.canary_assignment"]
