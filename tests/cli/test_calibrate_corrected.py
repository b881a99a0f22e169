"""`scoregate calibrate --corrected-labels N`: on real SummEval expert ratings and a scripted judge with known error
rates, the corrected mean of the held-back items lands on their human mean, where the raw judge mean does not."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from support.projects import CliResult

Cli = Callable[..., CliResult]
SUMMEVAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "summeval" / "summeval_rouge_scores.jsonl"
needs_data = pytest.mark.skipif(not SUMMEVAL.is_file(), reason=f"no SummEval data at {SUMMEVAL}")


def scripted_judge(path: Path, seed: int = 31) -> Path:
    """SummEval with two scripted judges of relevance: `judge_1_5` gives the rounded expert mean, one point higher
    (at most 5) with probability 0.6; `judge_pass` passes a summary the experts rate ≥ 4 (`human_pass`) with
    probability 0.9 (sensitivity) and one they rate lower with probability 0.3 (specificity 0.7)."""
    rng = np.random.default_rng(seed)
    rows = [json.loads(line) for line in SUMMEVAL.read_text(encoding="utf-8").splitlines()]
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            human = row["human"]["relevance"]
            passed = human >= 4
            row["judge_1_5"] = float(min(5, int(np.floor(human + 0.5)) + (rng.random() < 0.6)))
            row["human_pass"] = float(passed)
            row["judge_pass"] = float(rng.random() < (0.9 if passed else 0.3))
            out.write(json.dumps(row) + "\n")
    return path


@needs_data
@pytest.mark.parametrize(("judge", "human", "method"), [
    ("judge_1_5", "human.relevance", "ppi++"), ("judge_pass", "human_pass", "sensitivity-specificity"),
])  # fmt: skip
def test_the_corrected_interval_holds_the_held_back_human_mean_and_the_raw_mean_lies_outside_it(
    scoregate: Cli, tmp_path: Path, judge: str, human: str, method: str
) -> None:
    data = scripted_judge(tmp_path / "summeval_judged.jsonl")
    args = ("calibrate", "--file", str(data), "--judge-key", judge, "--human-key", human, "--corrected-labels", "200")

    result = scoregate(*args, "--json")

    assert result.code == 0, result.output
    check = json.loads(result.out)["held_out"]
    assert (check["labels"], check["n_run"], check["n_human"]) == (200, 1400, 1400)
    assert check["corrected"]["method"] == method
    assert check["covered"] is True
    low, high = check["corrected"]["ci_low"], check["corrected"]["ci_high"]
    assert not low <= check["raw_mean"] <= high  # the raw judge mean is outside the corrected interval
    if method == "ppi++":  # 1-5 scores: PPI++ lands near the truth (the pass/fail correction, 1/(q0 + q1 − 1) =
        # 1.7 times noisier here, is honest in its interval but not always nearer than the raw mean on one draw)
        assert abs(check["corrected"]["value"] - check["human_mean"]) < abs(check["raw_mean"] - check["human_mean"]) / 3

    text = " ".join(scoregate(*args).output.split())
    assert f"raw judge mean {check['raw_mean']:.3f} over 1400 items" in text
    assert f"corrected {check['corrected']['value']:.3f} [{low:.3f}, {high:.3f}]" in text
    assert f"human mean of those items (held back): {check['human_mean']:.3f}, inside the corrected interval" in text


def test_more_labels_than_the_set_leaves_for_a_run_is_one_clear_line(scoregate: Cli, tmp_path: Path) -> None:
    data = tmp_path / "tiny.jsonl"
    data.write_text("".join(json.dumps({"j": j, "h": h}) + "\n" for j, h in [(1, 1), (2, 2), (3, 3), (4, 4)]))
    result = scoregate(
        "calibrate", "--file", str(data), "--judge-key", "j", "--human-key", "h", "--corrected-labels", "3"
    )
    assert result.code != 0
    assert "3 labels of 4 items rated by both: leave at least 2 for the run" in " ".join(result.output.split())
    assert "Traceback" not in result.output
