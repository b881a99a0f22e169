"""The test project and the CLI as a test reads them: the small scripted project, its YAML, run store and results."""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.scripted_openai import markdown_summary

REPO = Path(__file__).resolve().parents[2]

SCOREGATE_BIN = Path(sys.executable).parent / "scoregate"

DATASET_IDS = ("smoke-001", "smoke-002", "smoke-003", "smoke-005", "smoke-006", "smoke-007")
"""The shipped smoke items the test project keeps: three catch-up, three how-to, all with `desired_style`."""

ALL_GATES = [
    "sections_present",
    "tldr_caps_met",
    "faithfulness",
    "hallucinations_per_summary",
    "conciseness",
    "quality_catchup",
    "quality_howto",
]


def copy_shipped(root: Path, files: dict[str, list[str]]) -> None:
    """Copy shipped project files into the test project at `root`: folder (prompts, evaluators...) → file names."""
    for folder, names in files.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copy(REPO / folder / name, root / folder / name)


def project_config(base_url: str, model: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return the test project's scoregate.yaml: the shipped gates and evaluators on the `scripted` model (served at
    `base_url`, or the `model` entry given)."""
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))
    route = shipped["experiments"]["smoke"]["prompt"]
    judges = ["ev_actionability_v1", "ev_faithfulness_v1", "ev_conciseness_v1"]
    served = {"provider": "openai", "model": "scripted-1", "base_url": base_url, "max_retries": 2, "timeout_s": 3}
    return {
        "project": "scripted-project",
        "settings": {
            "model": "scripted",
            "judge_model": "scripted",
            "concurrency": 2,
            "min_coverage": 0.8,
            "bootstrap_resamples": 200,
        },
        "models": {"scripted": {**(model or served), "max_connections": 4}},
        "composites": shipped["composites"],
        "gates": shipped["gates"],
        "experiments": {
            "smoke": {
                "dataset": "smoke_v1",
                "prompt": route,
                "evaluators": ["counters_v1", *judges],
                "composites": ["WeightedQuality"],
                "gates": ALL_GATES,
            },
            "counters": {
                "dataset": "smoke_v1",
                "prompt": route,
                "evaluators": ["counters_v1"],
                "gates": ["sections_present", "tldr_caps_met"],
                "concurrency": 1,
            },
        },
    }


def write_yaml(path: Path, data: Any) -> None:
    """Write `data` as YAML."""
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def canned_model() -> dict[str, Any]:
    """The `scripted` model as `provider: scripted`: the scripted server's summaries and judge replies, no HTTP."""
    howto = markdown_summary({"messages": [{"content": "Step-by-step"}]})
    replies = [{"match": "Step-by-step", "reply": howto}]
    return {
        "provider": "scripted",
        "model": "scripted-1",
        "options": {"replies": replies, "default": markdown_summary({})},
    }


def new_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: dict[str, Any]) -> Path:
    """Write the small test project (shipped prompts and evaluators, 6 smoke items) with `config` as scoregate.yaml.

    The environment is isolated per test: MLflow goes to a fresh sqlite store, no API key, no debug switch,
    and a wide console so messages are not wrapped.
    """
    root = tmp_path / "project"
    shutil.copytree(REPO / "prompts", root / "prompts")
    shutil.copytree(REPO / "evaluators", root / "evaluators")
    (root / "datasets").mkdir()
    shutil.copy(REPO / "datasets" / "smoke_v1.yaml", root / "datasets" / "smoke_v1.yaml")
    lines = (REPO / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if any(f'"id": "{item_id}"' in line for item_id in DATASET_IDS)]
    assert len(kept) == len(DATASET_IDS)
    (root / "datasets" / "smoke_v1.jsonl").write_text("".join(kept), encoding="utf-8")
    write_yaml(root / "scoregate.yaml", config)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow' / 'mlflow.db'}")
    (tmp_path / "mlflow").mkdir()
    monkeypatch.setenv("COLUMNS", "250")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SCOREGATE_DEBUG", "SCOREGATE_LOCAL_PORT",
                 "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "LANGFUSE_BASE_URL"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    return root


@dataclass(frozen=True)
class CliResult:
    """What a user sees from one `scoregate` command: exit code, stdout and stderr."""

    code: int
    out: str
    err: str

    @property
    def output(self) -> str:
        """stdout and stderr together, whitespace collapsed (so console wrapping never splits a phrase)."""
        return " ".join(f"{self.out}\n{self.err}".split())


class Runs:
    """The project's local run store as a test reads it: newest run, its results, summary and manifest."""

    def __init__(self, root: Path) -> None:
        self.root = root / "runs"

    def ids(self) -> list[str]:
        """Every stored run id, oldest first."""
        return sorted(p.name for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []

    def latest(self) -> str:
        """The newest run id (by its started_at)."""
        ids = self.ids()
        assert ids, "no run was stored"
        return max(ids, key=lambda run_id: self.manifest(run_id)["started_at"])

    def results(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """The parsed lines of results.jsonl."""
        text = (self.root / (run_id or self.latest()) / "results.jsonl").read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines()]

    def summary(self, run_id: str | None = None) -> dict[str, Any]:
        """summary.json."""
        return dict(json.loads((self.root / (run_id or self.latest()) / "summary.json").read_text(encoding="utf-8")))

    def manifest(self, run_id: str | None = None) -> dict[str, Any]:
        """manifest.json."""
        path = self.root / (run_id or self.latest()) / "manifest.json"
        return dict(json.loads(path.read_text(encoding="utf-8")))
