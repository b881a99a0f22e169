"""The regression gate: paired non-inferiority against the latest valid run of the production version."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from scoregate.analysis.regression import is_regression_gate
from scoregate.analysis.verdicts import interval_verdict
from scoregate.catalog.config_models import GateSpec
from support.regression_runs import BASE, METRIC, PROMPT, Gate, catchup, gate_of, promotions, run

OTHER_PROMPT = "summarization-howto"


def prompts(**versions: str) -> dict[str, Any]:
    """Receipts for prompts at these versions (keyword = prompt name with `_` for `-`)."""
    return {name.replace("_", "-"): {"version": v, "labels": [], "temperature": None, "max_tokens": None}
            for name, v in versions.items()}  # fmt: skip


def ci_low(baseline: list[float], candidate: list[float], resamples: int = 2000) -> float:
    """The lower bound of the 95% BCa bootstrap CI of the mean paired difference, computed here with scipy."""
    d = np.subtract(candidate, baseline)
    ci = stats.bootstrap((d,), np.mean, n_resamples=resamples, method="BCa", rng=np.random.default_rng(0))
    return float(ci.confidence_interval.low)


def test_candidate_within_the_margin_passes_with_the_ci_bound_as_evidence(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3))
    run(tmp_path, "prod", BASE, version="3", day=1)
    candidate = [v - 0.05 + (0.1 if i % 2 else -0.1) for i, v in enumerate(BASE)]
    current = run(tmp_path, "cand", candidate, version="4", day=2)

    result = gate_of(tmp_path, current)

    assert result.status == "pass"
    assert (result.stat, result.op, result.threshold) == ("paired_noninferiority", ">", -0.2)
    assert result.observed == pytest.approx(ci_low(BASE, candidate))
    assert -0.2 < result.observed < 0  # type: ignore[operator]
    assert result.coverage == 1.0
    assert "vs production run prod (summarization-catchup@3): 16 paired items" in result.detail
    assert "non-inferior within the margin 0.2" in result.detail
    # the same word `scoregate compare` prints for this interval (CI within ±0.2 here: equivalent)
    low, high = (float(x) for x in re.findall(r"CI ([+-][\d.e-]+) to ([+-][\d.e-]+)", result.detail)[0])
    word = interval_verdict(low, high, margin=0.2)[0]
    assert f"); {word}, non-inferior within" in result.detail


def test_a_regression_beyond_the_margin_fails(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3))
    run(tmp_path, "prod", BASE, version="3", day=1)
    current = run(tmp_path, "cand", [v - 0.5 for v in BASE], version="4", day=2)

    result = gate_of(tmp_path, current)

    assert result.status == "fail"
    assert result.observed == pytest.approx(-0.5)
    assert "); worse, non-inferiority not shown" in result.detail


def test_a_mean_drop_inside_the_margin_still_fails_when_the_evidence_is_too_weak(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3))
    base = [3.0] * 8
    candidate = [4.0, 2.0, 4.0, 2.0, 4.0, 2.0, 3.6, 1.6]  # mean drop 0.1 < 0.2, but noisy over 8 items
    run(tmp_path, "prod", base, version="3", day=1)
    current = run(tmp_path, "cand", candidate, version="4", day=2)

    result = gate_of(tmp_path, current)

    assert np.mean(candidate) - np.mean(base) == pytest.approx(-0.1)
    assert result.status == "fail"
    assert result.observed == pytest.approx(ci_low(base, candidate))
    assert result.observed < -0.2  # type: ignore[operator]


def test_the_baseline_is_the_latest_valid_run_of_the_production_version(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3))
    other_judge = {"name": "big", "provider": "openai", "model": "judge-2", "endpoint": "http://y"}
    run(tmp_path, "prod-old", [v + 1 for v in BASE], version="3", day=1)  # the candidate regresses against this one
    run(tmp_path, "prod-new", BASE, version="3", day=2)
    run(tmp_path, "prod-limited", BASE, version="3", day=3, options={"limit": 5})
    run(tmp_path, "prod-other-data", BASE, version="3", day=4,
        dataset={"name": "hardcases", "content_hash": "f" * 64, "items": 16})  # fmt: skip
    run(tmp_path, "prod-crashed", BASE, version="3", day=5, status="failed")
    run(tmp_path, "prod-other-judge", BASE, version="3", day=6, judge_model=other_judge)
    run(tmp_path, "old-version", [1.0] * 16, version="2", day=7)
    current = run(tmp_path, "cand", BASE, version="4", day=8)

    result = gate_of(tmp_path, current)

    assert result.status == "pass"
    assert "vs production run prod-new " in result.detail


def test_the_last_move_in_the_promotions_log_decides_rollback_included(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 2), (PROMPT, "promote", 3), (PROMPT, "rollback", 2))
    run(tmp_path, "v2", BASE, version="2", day=1)
    run(tmp_path, "v3", [1.0] * 16, version="3", day=2)
    current = run(tmp_path, "cand", BASE, version="4", day=3)

    result = gate_of(tmp_path, current)

    assert result.status == "pass"
    assert "vs production run v2 (summarization-catchup@2)" in result.detail


def test_without_a_promotions_log_the_labels_recorded_by_the_runs_decide(tmp_path: Path) -> None:
    run(tmp_path, "v3", BASE, version="3", day=1, prompts=catchup("3", ("production", "latest")))
    run(tmp_path, "v3-again", BASE, version="3", day=2)  # same version, no labels recorded: still its run
    current = run(tmp_path, "cand", BASE, version="4", day=3, prompts=catchup("4", ("candidate",)))

    result = gate_of(tmp_path, current)

    assert result.status == "pass"
    assert "vs production run v3-again (summarization-catchup@3)" in result.detail


def test_no_baseline_makes_the_gate_incomplete_never_a_pass(tmp_path: Path) -> None:
    current = run(tmp_path, "cand", BASE, version="4", day=3)

    nobody = gate_of(tmp_path, current)
    promotions(tmp_path, (PROMPT, "promote", 3))
    run(tmp_path, "prod-limited", BASE, version="3", day=1, options={"limit": 5})
    no_run = gate_of(tmp_path, current)

    assert (nobody.status, nobody.observed) == ("incomplete", None)
    assert "no 'production' move of summarization-catchup in promotions.jsonl" in nobody.detail
    assert no_run.status == "incomplete"
    assert "no valid run of production (summarization-catchup@3) on hardcases" in no_run.detail
    assert "prod-limited: ran only 5 items (--limit)" in no_run.detail


def test_low_paired_coverage_is_incomplete(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3))
    run(tmp_path, "prod", [v if i % 2 else None for i, v in enumerate(BASE)], version="3", day=1)
    current = run(tmp_path, "cand", BASE, version="4", day=2)

    result = gate_of(tmp_path, current)
    lenient = gate_of(tmp_path, current, min_coverage=0.5)

    assert (result.status, result.coverage) == ("incomplete", 0.5)
    assert "paired coverage 50% is below the floor 80%" in result.detail
    assert lenient.status == "pass"


def test_a_metric_bounded_from_above_counts_an_increase_as_the_regression(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3))
    counts = [0.0, 1.0, 0.0, 2.0, 1.0, 0.0, 1.0, 0.0, 3.0, 1.0, 0.0, 1.0, 2.0, 0.0, 1.0, 1.0]
    gate = Gate(metric=METRIC, op="<=", margin=0.2)
    run(tmp_path, "prod", counts, version="3", day=1)
    more = run(tmp_path, "more", [c + 1 for c in counts], version="4", day=2)
    fewer = run(tmp_path, "fewer", [max(c - 1, 0) for c in counts], version="5", day=3)

    assert gate_of(tmp_path, more, gate).status == "fail"
    assert gate_of(tmp_path, more, gate).observed == pytest.approx(-1.0)
    assert gate_of(tmp_path, fewer, gate).status == "pass"


def test_a_routed_run_needs_every_prompt_at_its_production_version(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3), (OTHER_PROMPT, "promote", 7))
    run(tmp_path, "half-prod", BASE, version="3", day=1, prompts=prompts(summarization_catchup="3",
                                                                          summarization_howto="6"))  # fmt: skip
    current = run(tmp_path, "cand", BASE, version="4", day=2,
                  prompts=prompts(summarization_catchup="4", summarization_howto="8"))  # fmt: skip

    missing = gate_of(tmp_path, current)
    run(tmp_path, "full-prod", BASE, version="3", day=1,
        prompts=prompts(summarization_catchup="3", summarization_howto="7"))  # fmt: skip
    found = gate_of(tmp_path, current)

    assert missing.status == "incomplete"
    assert "summarization-catchup@3, summarization-howto@7" in missing.detail
    assert found.status == "pass"
    assert "vs production run full-prod" in found.detail


def test_regression_gates_are_recognised_by_their_fields() -> None:
    assert is_regression_gate(Gate())
    assert is_regression_gate(Gate(stat="mean", compare_to="production"))
    plain = GateSpec(name="faithfulness", metric="faithfulness_score", op=">=", threshold=4.2)
    assert not is_regression_gate(plain)


@pytest.mark.skipif(
    "compare_to" not in GateSpec.model_fields, reason="GateSpec has no `compare_to`/`margin` fields yet (catalog)"
)
def test_a_gate_declared_in_scoregate_yaml_runs_the_same_check(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3))
    run(tmp_path, "prod", BASE, version="3", day=1)
    current = run(tmp_path, "cand", [v - 0.5 for v in BASE], version="4", day=2)
    spec = GateSpec.model_validate(
        {"name": "no_regression", "metric": METRIC, "op": ">=", "threshold": 0, "stat": "paired_noninferiority",
         "compare_to": "production", "margin": 0.2, "datasets": ["hardcases"]}
    )  # fmt: skip

    result = gate_of(tmp_path, current, spec)

    assert (result.status, result.threshold) == ("fail", -0.2)


def test_a_non_inferior_interval_says_non_inferior_once(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3))
    run(tmp_path, "prod", BASE, version="3", day=1)
    noise = [0.4, -0.3, 0.35, -0.25, 0.3, -0.4, 0.25, -0.35, 0.4, -0.3, 0.35, -0.25, 0.3, -0.4, 0.25, -0.35]
    current = run(tmp_path, "cand", [v + 0.05 + n for v, n in zip(BASE, noise, strict=True)], version="4", day=2)

    result = gate_of(tmp_path, current)

    low, high = (float(x) for x in re.findall(r"CI ([+-][\d.e-]+) to ([+-][\d.e-]+)", result.detail)[0])
    assert interval_verdict(low, high, margin=0.2)[0] == "non-inferior"  # the case: neither better nor equivalent
    assert result.status == "pass"
    assert "); non-inferior within the margin 0.2" in result.detail
    assert "non-inferior, non-inferior" not in result.detail
