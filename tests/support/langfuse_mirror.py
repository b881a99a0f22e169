"""Runs mirrored to the fake Langfuse, and what the mirror sent: items, root spans, scores, metadata."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.sinks.langfuse.experiment_mirror import MirrorReport, mirror_run_to_langfuse
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse

LANGFUSE_ENV = ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "LANGFUSE_BASE_URL")


ROOT_SPAN = "experiment-item-run"


# ---------------------------------------------------------------- fixtures and helpers
@pytest.fixture
def langfuse_off(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Return off(): unset the Langfuse variables (runs made while Langfuse is disabled)."""

    def off() -> None:
        for name in LANGFUSE_ENV:
            monkeypatch.delenv(name, raising=False)

    off()
    return off


@pytest.fixture
def langfuse_on(fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Return on(): point the Langfuse variables at the fake."""

    def on() -> None:
        for name, value in fake_langfuse.env().items():
            monkeypatch.setenv(name, value)

    return on


@pytest.fixture
def judged_run(
    project_dir: Path, langfuse_off: Callable[[], None], edit_yaml: Callable[[Path, Callable[[Any], None]], None]
) -> RunStore:
    """A finished smoke run (6 items, three LLM judges and the counters, priced calls) made with Langfuse off."""
    prices = {"input_cost_per_mtok": 0.15, "output_cost_per_mtok": 0.6}
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config["models"]["scripted"].update(prices))
    return make_run(project_dir, "smoke")


def make_run(project_dir: Path, experiment: str, *, resume: str | None = None) -> RunStore:
    """Run (or resume) an experiment locally, without any mirror."""
    return run_experiment(
        project_dir,
        experiment,
        RunOptions(resume=RunOptions.ResumeFrom(run_id=resume), mirrors=RunOptions.Mirrors(off=frozenset({"mlflow"}))),
    ).store


def mirror(store: RunStore, project_dir: Path) -> MirrorReport:
    """Mirror a stored run to Langfuse through the library entry point."""
    return mirror_run_to_langfuse(store, load_project(project_dir))


def results(store: RunStore) -> list[ItemResult]:
    """The run's stored results, by dataset order."""
    return sorted(store.iter_results(), key=lambda r: r.index)


def root_spans(fake: FakeLangfuse) -> list[dict[str, Any]]:
    """One span per mirrored item: the runner's item root span."""
    return fake.state.find_spans(ROOT_SPAN)


def span_metadata(span: dict[str, Any], key: str) -> dict[str, Any]:
    """Metadata the runner put on a span: one JSON attribute (SDK 5) or one attribute per key (SDK 4)."""
    attributes = span["attributes"]
    if key in attributes:
        return dict(json.loads(attributes[key]))
    return {name.removeprefix(key + "."): value for name, value in attributes.items() if name.startswith(key + ".")}


def item_of(span: dict[str, Any]) -> str:
    """The scoregate item id a runner span belongs to."""
    return str(span_metadata(span, "langfuse.experiment.item.metadata")["item_id"])


def score_ids(fake: FakeLangfuse) -> list[str]:
    """The ids of every score the fake stores (a duplicate would appear twice)."""
    return [s["id"] for s in fake.state.scores]
