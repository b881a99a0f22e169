"""A new evaluator kind is one module and one registry line: the throwaway `exclaims` kind, end to end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.catalog.directions import project_directions
from scoregate.catalog.plan import models_used, plan_experiment
from scoregate.errors import ValidationFailed
from scoregate.scoring.kinds import registry
from scoregate.tracks import registry as tracks
from scoregate.tracks.project import load_project, write_project_schemas
from support import plugin_kind_exclaims
from support.projects import copy_shipped, write_yaml
from support.scripted_openai import ScriptedOpenAI

REPO = Path(__file__).resolve().parents[2]
NO_MIRRORS = RunOptions(
    selection=RunOptions.Selection(limit=3),
    mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})),
    use_cache=False,
)
REPLIES = ["Refund sent!", "Refund sent!! Invoice too!", "Refund sent."]


@pytest.fixture
def exclaims_project(tmp_path: Path, scripted_server: ScriptedOpenAI) -> Path:
    """Three support calls summarised by the scripted model, scored by `kind: exclaims` and gated on its key."""
    root = tmp_path / "project"
    (root / "datasets").mkdir(parents=True)
    rows = (REPO / "datasets" / "support_calls_v1.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    (root / "datasets" / "support_calls_v1.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    copy_shipped(root, {"prompts": ["call-summary.yaml"]})
    (root / "evaluators").mkdir()
    write_yaml(root / "evaluators" / "calm_v1.yaml", {"kind": "exclaims", "name": "calm_v1", "version": 1})
    write_yaml(
        root / "scoregate.yaml",
        {
            "project": "kind-plugin",
            "settings": {"model": "scripted", "concurrency": 1, "bootstrap_resamples": 200},
            "models": {"scripted": {"provider": "openai", "model": "scripted-1", "base_url": scripted_server.url}},
            "experiments": {
                "calm": {
                    "dataset": "support_calls_v1",
                    "prompt": "call-summary",
                    "evaluators": ["calm_v1"],
                    "gates": ["calm"],
                }
            },
            "gates": [{"name": "calm", "metric": "exclaims", "op": "<=", "threshold": 1.5}],
        },
    )
    replies = iter(REPLIES)
    scripted_server.responder = lambda body: next(replies)
    return root


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The kind's one registry line, added for this test only."""
    monkeypatch.setattr(registry, "KINDS", (*registry.KINDS, plugin_kind_exclaims.KIND))
    tracks.evaluator_kinds.cache_clear()
    yield
    tracks.evaluator_kinds.cache_clear()


def test_a_kind_added_by_one_line_is_validated_run_scored_gated_and_published(
    exclaims_project: Path, registered: None, tmp_path: Path
) -> None:
    project = load_project(exclaims_project)
    plan = plan_experiment(project, "calm")
    assert project_directions(project)["exclaims"] == "lower"
    assert models_used(plan) == ["scripted"]  # the kind calls no model

    outcome = run_experiment(exclaims_project, "calm", NO_MIRRORS)

    scores = {r.item_id: [(s.name, s.value) for s in r.scores] for r in outcome.store.iter_results()}
    assert sorted(scores.values()) == [[("exclaims", 0.0)], [("exclaims", 1.0)], [("exclaims", 3.0)]]
    assert outcome.summary["scores"]["exclaims"]["mean"] == pytest.approx(4 / 3)
    (gate,) = outcome.summary["gates"]
    assert (gate["name"], gate["observed"], gate["status"]) == ("calm", pytest.approx(4 / 3), "pass")
    schema = json.loads(write_project_schemas(tmp_path / "schemas")[2].read_text(encoding="utf-8"))
    assert "ExclaimsSpec" in schema["$defs"]


def test_without_its_registry_line_the_kind_is_refused_with_the_kinds_that_exist(exclaims_project: Path) -> None:
    tracks.evaluator_kinds.cache_clear()
    with pytest.raises(ValidationFailed) as refused:
        load_project(exclaims_project)
    (problem,) = refused.value.problems
    assert str(exclaims_project / "evaluators" / "calm_v1.yaml") in problem
    assert "'exclaims'" in problem and "'llm_judge'" in problem and "'tags'" in problem
