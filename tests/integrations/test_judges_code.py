"""Counter files as Langfuse `code` evaluators: the generated source gives scoregate's values, and it is applied
with the LLM judges' identity and blue/green rules; the counters that cannot run there say why."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.app.judges_sync import sync_project_judges
from scoregate.integrations.langfuse.client import LangfuseSettings
from scoregate.integrations.langfuse.evaluators_api import EvaluatorsApi
from scoregate.integrations.langfuse.evaluators_code import counters_source
from scoregate.integrations.langfuse.evaluators_sync import JudgeSyncReport, sync_judges
from scoregate.scoring.base import EvalContext
from scoregate.scoring.counters import CountersEvaluator
from scoregate.scoring.kinds.counters import CountersSpec
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import point_at
from support.live_traces import send_trace

REPO = Path(__file__).resolve().parents[2]
SUMMARIES = ["TL;DR: Python 3.13 ships a free-threaded build.\n\n## Key Topics\n- Kubernetes 1.31\n", "", "  one  "]

RUNNER = """
import json, sys
from types import SimpleNamespace
case = json.load(sys.stdin)
namespace = {}
exec(case["source"], namespace)
ctx = SimpleNamespace(observation=SimpleNamespace(**case["observation"]), experiment=None)
try:
    result = namespace["evaluate"](ctx)
    print(json.dumps({s.name: s.value for s in result.scores}))
except Exception as exc:
    print(json.dumps({"error": str(exc)}))
"""


@pytest.fixture
def fake() -> Iterator[FakeLangfuse]:
    with FakeLangfuse(server_mode="new") as server:
        yield server


def sync(fake: FakeLangfuse, root: Path, names: list[str], *, dry_run: bool = False) -> JudgeSyncReport:
    api = EvaluatorsApi(LangfuseSettings(fake.public_key, fake.secret_key, fake.base_url))
    return sync_judges(load_project(root), names, dry_run=dry_run, api=api)


def in_clean_interpreter(source: str, observation: dict[str, Any]) -> dict[str, Any]:
    """Run the generated source's `evaluate` in a fresh `python -I` (no scoregate, no site-packages' path)."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", RUNNER],
        input=json.dumps({"source": source, "observation": observation}),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def counters_spec() -> CountersSpec:
    data = yaml.safe_load((REPO / "evaluators" / "counters_v1.yaml").read_text(encoding="utf-8"))
    return CountersSpec.model_validate(data)


def test_the_generated_source_in_a_clean_interpreter_gives_scoregates_counter_values() -> None:
    spec = counters_spec()
    source = counters_source(spec)
    items = [json.loads(line) for line in (REPO / "datasets" / "catchup_v1.jsonl").read_text().splitlines()[:3]]
    compared = 0
    for item, summary in zip(items, SUMMARIES, strict=True):
        ctx = EvalContext(item["id"], item["input"], summary, None, item["metadata"], call_model=None)  # type: ignore[arg-type]
        ours = {s.name: s.value for s in CountersEvaluator(spec).score(ctx)}
        live = in_clean_interpreter(source, {"input": item["input"], "output": summary, "metadata": {}})
        assert live == {"word_count": ours["word_count"], "compression_ratio": ours["compression_ratio"]}
        compared += 1
    assert compared == 3 and live["word_count"] == 1


def test_a_counter_that_cannot_be_measured_gives_no_score_never_zero() -> None:
    source = counters_source(counters_spec())

    no_transcript = in_clean_interpreter(source, {"input": {"title": "t"}, "output": "a b c", "metadata": None})
    no_text = in_clean_interpreter(source, {"input": {"transcript": "x y"}, "output": None, "metadata": None})

    assert no_transcript == {"word_count": 3}
    assert no_text["error"].startswith("not measured (no score, never 0): word_count: output is null, not text")


def test_a_counters_file_becomes_one_code_evaluator_and_says_which_counters_stay_local(
    fake: FakeLangfuse, project_dir: Path
) -> None:
    report = sync(fake, project_dir, ["counters_v1", "format_checks_v1"])
    again = sync(fake, project_dir, ["counters_v1", "format_checks_v1"])

    (evaluator,) = fake.state.evals.evaluators.values()
    latest = fake.state.evals.latest(evaluator["id"])
    assert (evaluator["name"], latest["type"], latest["sourceCodeLanguage"]) == ("counters_v1", "code", "PYTHON")
    assert latest["sourceCode"] == counters_source(counters_spec())
    counters, checks = report.plans
    assert (counters.action, counters.score) == ("create", "word_count, compression_ratio")
    notes = " ".join(counters.notes)
    assert "similarity" not in notes  # counters_v1 has none
    assert "references_count stays local: needs scoregate's section finder" in notes
    assert "tldr_within_cap stays local: needs scoregate's section finder" in notes and "template-echo" in notes
    assert checks.action == "skip" and checks.notes[0].startswith(
        "no counter can run in Langfuse: format_adherence_det"
    )
    assert [p.action for p in again.plans] == ["unchanged", "skip"] and again.writes == 0


def test_a_changed_counters_file_is_a_new_green_code_evaluator(fake: FakeLangfuse, project_dir: Path) -> None:
    blue = sync(fake, project_dir, ["summary_checks_v1"]).plans[0]
    path = project_dir / "evaluators" / "summary_checks_v1.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["counters"][1]["source"] = "input.title"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")

    green = sync(fake, project_dir, ["summary_checks_v1"]).plans[0]

    assert "facts_similarity stays local: needs rapidfuzz" in " ".join(blue.notes)
    assert green.action == "green" and green.blue == [blue.evaluator_id]
    assert all(len(v) == 1 for v in fake.state.evals.versions.values()) and len(fake.state.evals.evaluators) == 2


def test_a_rule_running_the_code_evaluator_writes_each_counter_under_its_own_score_key(
    fake: FakeLangfuse, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_at(monkeypatch, fake)
    rules = project_dir / "rules"
    rules.mkdir()
    (rules / "counting.yaml").write_text(yaml.safe_dump({"name": "counting", "judges": ["counters_v1"]}))
    sync_project_judges(project_dir)
    trace = send_trace(fake, "live", input={"transcript": "one two three four"}, output="one two")

    scores = {s["name"]: s for s in fake.state.scores if s["traceId"] == trace}
    assert {name: s["value"] for name, s in scores.items()} == {"word_count": 2, "compression_ratio": 0.5}
    (evaluator,) = [e for e in fake.state.evals.evaluators.values() if e["name"] == "counters_v1"]
    version = fake.state.evals.latest(evaluator["id"])["id"]
    assert {s["metadata"]["evaluator_version_id"] for s in scores.values()} == {version}
