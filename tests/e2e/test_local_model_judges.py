"""Every shipped evaluator (all judges, the pairwise one included, and the counters) through the real local model.

One short how-to item, one run: each judge's request must reach llama.cpp and come back, and each score key
must be measured within its declared range or be null with a reason — never a 0 for a failure.
Ten model calls on a 135M model on CPU: about 2-5 minutes, longer on a loaded machine.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

import support.local_model as local
from scoregate.catalog.evaluators import EvaluatorSpec
from scoregate.scoring.kinds.counters import CountersSpec
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec
from scoregate.tracks.registry import build_evaluator, evaluator_kinds

REPO = Path(__file__).resolve().parents[2]
ITEM_ID = "smoke-005"
JUDGE_MAX_TOKENS = 120  # a reply cut short is a null score with its reason, which the test accepts
# Two hand-written summaries of smoke-005 for the pairwise judge: A follows the transcript, B is vague and invents.
SUMMARY_A = (
    "## TL;DR\nAdd Ruff to pre-commit: install, configure two hooks, install the git hook, run once.\n\n"
    "## Step-by-step\n1. `pip install pre-commit` (3+).\n2. Add ruff-pre-commit (rev v0.6.9) with hooks "
    "ruff --fix, then ruff-format.\n3. `pre-commit install`.\n4. `pre-commit run --all-files`.\n\n"
    "## Pitfalls/Notes\n- Pin the same Ruff version in the hook and dev dependencies.\n\n"
    "## References & Tools\n- https://pre-commit.com/"
)
SUMMARY_B = "## TL;DR\nLinters are useful. Use Black and flake8 in CI; it takes an afternoon."

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        bool(local.MISSING),
        reason=f"the local model needs {' and '.join(local.MISSING)} (install with `make setup`)",
    ),
]


def shipped_evaluators() -> dict[str, EvaluatorSpec]:
    """Every judge and counters file shipped in evaluators/, by name (other kinds score other datasets)."""
    adapter = evaluator_kinds().adapter
    specs = [
        adapter.validate_python(yaml.safe_load(p.read_text())) for p in sorted((REPO / "evaluators").glob("*.yaml"))
    ]
    return {s.name: s for s in specs if isinstance(s, LlmJudgeSpec | CountersSpec)}


def write_project(root: Path, evaluators: dict[str, EvaluatorSpec]) -> None:
    """The how-to prompt with a small max_tokens, every evaluator (judges capped), one item with two extra summaries."""
    for folder in ("prompts", "evaluators", "datasets"):
        (root / folder).mkdir(parents=True)
    prompt = yaml.safe_load((REPO / "prompts" / "summarization-howto.yaml").read_text(encoding="utf-8"))
    prompt["config"]["max_tokens"] = 100
    (root / "prompts" / "summarization-howto.yaml").write_text(yaml.safe_dump(prompt), encoding="utf-8")
    for name, spec in evaluators.items():
        source = REPO / "evaluators" / f"{name}.yaml"
        if isinstance(spec, LlmJudgeSpec):
            raw = yaml.safe_load(source.read_text(encoding="utf-8"))
            raw["max_tokens"] = min(raw.get("max_tokens", JUDGE_MAX_TOKENS), JUDGE_MAX_TOKENS)
            (root / "evaluators" / f"{name}.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
        else:
            shutil.copy(source, root / "evaluators" / f"{name}.yaml")
    lines = (REPO / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines()
    (item,) = [json.loads(line) for line in lines if json.loads(line)["id"] == ITEM_ID]
    item["input"] |= {"summary_a": SUMMARY_A, "summary_b": SUMMARY_B}
    (root / "datasets" / "smoke_v1.jsonl").write_text(json.dumps(item) + "\n", encoding="utf-8")
    config = {
        "project": "local-model-judges-test",
        "settings": {"model": "local", "judge_model": "local", "concurrency": 1, "bootstrap_resamples": 100},
        "models": {"local": {"provider": "local", "model": "smollm2-135m", "timeout_s": 300, "max_retries": 1}},
        "experiments": {
            "suite": {"dataset": "smoke_v1", "prompt": "summarization-howto", "evaluators": sorted(evaluators)}
        },
    }
    (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def problem(score: dict[str, Any], spec: EvaluatorSpec, data_type: str) -> str | None:
    """Why a stored score breaks "measured in range, or null with a reason"; None when it holds."""
    value = score["value"]
    if value is None:
        return None if score["reason"] else "null without a reason"
    fields = [spec.score, *spec.extra] if isinstance(spec, LlmJudgeSpec) else []
    declared = next((f for f in fields if f.key == score["name"]), None)
    if data_type == "text":
        return None if isinstance(value, str) else f"text key holds {value!r}"
    if data_type == "boolean":
        return None if value in (0, 1) else f"boolean key holds {value!r}"
    if data_type == "categorical":
        allowed = declared.categories if declared else None
        return None if allowed and value in allowed else f"{value!r} is not one of {allowed}"
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return f"numeric key holds {value!r}"
    if declared is not None and declared.range is not None:
        lo, hi = declared.range
        return None if lo <= value <= hi and value == int(value) else f"{value!r} is outside {lo:g}-{hi:g}"
    return None


def test_every_shipped_evaluator_through_the_real_local_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    evaluators = shipped_evaluators()
    root = tmp_path / "project"
    write_project(root, evaluators)
    port = local.free_port()
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(port))
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.delenv("SCOREGATE_DEBUG", raising=False)

    served = local.scoregate(root, "model", "serve", timeout=150)
    try:
        assert served.returncode == 0, served.stderr
        ran = local.scoregate(root, "run", "suite", "--no-mlflow", timeout=900)
    finally:
        local.stop_server(root)

    assert ran.returncode == 0, ran.stdout + ran.stderr
    (run_dir,) = [p for p in (root / "runs").iterdir() if p.is_dir()]
    (result,) = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert result["error"] is None and isinstance(result["output"], str) and result["output"].strip()
    for name, spec in evaluators.items():
        if isinstance(spec, LlmJudgeSpec):
            calls = [c for c in result["calls"] if c["purpose"] == f"judge:{name}"]
            assert len(calls) == spec.samples, name
            assert all(c["error"] is None and c["tokens_out"] for c in calls), calls
    stored = {s["name"]: s for s in result["scores"]}
    broken = {}
    for name, spec in evaluators.items():
        for key, data_type in build_evaluator(spec, default_judge_model="local").score_keys():
            score = stored.get(key)
            if score is None or score["evaluator"] != name:
                broken[key] = f"not written by {name}"
            elif why := problem(score, spec, data_type):
                broken[key] = why
    assert not broken, broken
    assert stored["word_count"]["value"] > 0
