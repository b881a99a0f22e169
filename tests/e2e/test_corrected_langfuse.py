"""A run's corrected judge mean reaches the Langfuse double as a labelled run score the SDK's models accept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.store.run_store import RunStore
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.langfuse_mirror import langfuse_off as langfuse_off  # the fixtures
from support.langfuse_mirror import langfuse_on as langfuse_on
from support.langfuse_mirror import make_run, mirror

CORRECTED = {
    "method": "ppi++", "method_name": "PPI++", "value": 4.1234, "ci_low": 3.9, "ci_high": 4.35, "confidence": 0.95,
    "n_run": 6, "n_labels": 40, "reason": None, "details": {"lambda": 0.8, "se": 0.11},
    "calibrated_at": "2026-11-29T12:00:00+00:00", "human_key": "human_faithfulness",
}  # fmt: skip


def test_the_corrected_mean_is_a_run_score_beside_the_raw_mean(
    project_dir: Path, langfuse_off: Callable[[], None], langfuse_on: Callable[[], None], fake_langfuse: FakeLangfuse
) -> None:
    store = make_run(project_dir, "smoke")
    summary = store.summary
    assert summary is not None
    summary["scores"]["faithfulness_score"]["corrected"] = CORRECTED  # as a calibrated judge's run would carry it
    store.write_summary(summary)
    langfuse_on()

    report = mirror(RunStore.open(project_dir / "runs", store.run_id), project_dir)

    assert report.complete, report.lines()
    assert fake_langfuse.validation_failures == []
    run_level = {s["name"]: s for s in fake_langfuse.state.scores if s["datasetRunId"] == report.experiment_id}
    corrected = run_level["faithfulness_score_corrected_mean"]
    assert (corrected["dataType"], corrected["value"]) == ("NUMERIC", pytest.approx(4.1234))
    assert corrected["comment"].startswith("bias-corrected by the judge's calibration set (PPI++, 40 labels vs ")
    assert run_level["faithfulness_score_mean"]["value"] == pytest.approx(
        summary["scores"]["faithfulness_score"]["mean"]
    )
