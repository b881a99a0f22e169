"""Labels that tell runs apart by what differs between them: model, prompt versions, dataset, experiment, judge."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, Receipts, RunSummary

Run = Mapping[str, Any]
"""A run as labelled here: `run_id`, `model`, `prompts` (name → version), `dataset` (and `dataset_hash`),
`experiment`, `judge_model`; a summary.json or a report header has these keys."""


def _dataset(run: Run) -> str:
    digest = str(run.get("dataset_hash") or "")[:12]
    return f"{run.get('dataset')}@{digest}" if digest else str(run.get("dataset") or "")


def _differing_prompts(runs: Sequence[Run]) -> Callable[[Run], str]:
    """`name@version` of each prompt whose version is not the same in every run (a prompt a run lacks counts)."""
    names = list(dict.fromkeys(name for run in runs for name in run.get("prompts") or {}))
    differ = [n for n in names if len({str((run.get("prompts") or {}).get(n)) for run in runs}) > 1]

    def label(run: Run) -> str:
        prompts = run.get("prompts") or {}
        return ", ".join(f"{n}@{prompts[n]}" for n in differ if n in prompts)

    return label


def _aspects(runs: Sequence[Run]) -> list[Callable[[Run], str]]:
    """How each aspect reads in a label, in the order labels list them."""
    names_dataset = len({str(run.get("dataset")) for run in runs}) > 1
    return [
        lambda run: str(run.get("model") or ""),
        _differing_prompts(runs),
        (lambda run: str(run.get("dataset") or "")) if names_dataset else _dataset,
        lambda run: f"experiment {run.get('experiment')}" if run.get("experiment") else "",
        lambda run: f"judge {run.get('judge_model')}" if run.get("judge_model") else "",
    ]


def run_labels(runs: Sequence[Run]) -> list[str]:
    """Label each run by the aspects that differ between `runs` (` · `-joined), the model when none does, and the
    run id in brackets where two labels would still be equal (two runs of the same set-up); labels are unique."""
    aspects = _aspects(runs)
    differing = [aspect for aspect in aspects if len({aspect(run) for run in runs}) > 1]
    parts = [[aspect(run) for aspect in differing] for run in runs]
    labels = [
        " · ".join(p for p in ps if p) or str(run.get("model") or "") for run, ps in zip(runs, parts, strict=True)
    ]
    return [
        (f"{label} ({run.get('run_id')})" if label else str(run.get("run_id"))) if labels.count(label) > 1 else label
        for run, label in zip(runs, labels, strict=True)
    ]


def identity(run_id: str, summary: RunSummary, manifest: Manifest) -> dict[str, Any]:
    """A stored run as `run_labels` reads it: its summary's model, prompts, dataset and experiment, and its judge."""
    judge = manifest.receipts.judge_model
    return {**summary.to_dict(), "run_id": run_id, "judge_model": judge.model if judge else None}


def receipts_identity(run_id: str, receipts: Receipts, prompt: str) -> dict[str, Any]:
    """A run as `run_labels` reads it, from its receipts; `prompt` (an item's `name@version`) stands for its prompts."""
    dataset, model, judge = receipts.dataset, receipts.model, receipts.judge_model
    name, _, version = prompt.rpartition("@")
    prompts = {name: version} if name else {prompt: ""}
    return {
        "run_id": run_id, "model": model.name if model else None, "prompts": prompts,
        "dataset": dataset.name if dataset else None, "dataset_hash": dataset.content_hash if dataset else None,
        "experiment": receipts.experiment, "judge_model": judge.model if judge else None,
    }  # fmt: skip


def with_labels(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return `runs` (report headers), each given its `label` from `run_labels`."""
    for run, label in zip(runs, run_labels(runs), strict=True):
        run["label"] = label
    return runs
