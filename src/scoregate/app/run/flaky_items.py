"""Flaky items of an experiment: each item's verdict history on its `every_item` gates, read from the stored runs.

The runs read are the experiment's newest `settings.flaky.window_runs` valid runs (invalidated and damaged runs
are left out and counted), every repeat of each. `scoregate.analysis.flaky` says what a flip is and when an
item is flaky; a flaky item is kept out of the `every_item` gates of the run being summarised as unmeasured
(`scoregate.analysis.gates`), and the gate's verdict and detail, the summary's `flaky` block, the report and
`scoregate items flaky` name it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.analysis.flaky import FlakyItem, FlipCounter, GateRule, Observation, flaky_items
from scoregate.catalog.config_models import GateSpec, ProjectConfig
from scoregate.errors import ScoregateError
from scoregate.store.invalidation import why_invalid
from scoregate.store.records import ItemResult
from scoregate.store.run_store import DamagedRun, RunStore, list_runs
from scoregate.support.suggest import unknown_name

if TYPE_CHECKING:
    from scoregate.store.record import Receipts


@dataclass(frozen=True)
class FlakyReport:
    """The flaky items of an experiment and what was read to find them."""

    experiment: str
    threshold: float
    min_observations: int
    window_runs: int
    runs: int
    run_ids: list[str]
    skipped: list[str]
    gates: list[str]
    items: list[FlakyItem] = field(default_factory=list)

    def kept_out(self, gate: str) -> set[str]:
        """The ids of the items flaky on `gate`."""
        return {i.item_id for i in self.items if i.gate == gate}

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready), as summary.json's `flaky` block holds it."""
        return asdict(self)


def every_item_rules(config: ProjectConfig, experiment: str) -> list[GateRule]:
    """The experiment's `every_item` gates that apply to its dataset, as rules an item is judged by."""
    spec = config.experiments[experiment]
    gates = {g.name: g for g in config.gates}
    wanted: list[GateSpec] = [gates[n] for n in spec.gates if n in gates]
    return [
        GateRule(g.name, g.metric, g.op, g.threshold)
        for g in wanted
        if g.stat == "every_item" and (g.datasets is None or spec.dataset in g.datasets)
    ]


def conditions(receipts: Receipts, result: ItemResult) -> str:
    """A short fingerprint of what an item's verdict depends on besides chance: prompts, models, scorers, the item."""
    key = {
        "prompts": receipts.prompt_versions(),
        "model": receipts.model.model if receipts.model is not None else None,
        "judge": receipts.judge_model.model if receipts.judge_model is not None else None,
        "evaluators": receipts.evaluator_hashes(),
        "item": [result.input, result.expected_output],
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _runs_of(
    runs_dir: Path, experiment: str, window: int, current: RunStore | None
) -> tuple[list[RunStore], list[str]]:
    """The experiment's newest valid runs, oldest first (the current run always among them), and those left out."""
    chosen: list[RunStore] = []
    skipped: list[str] = []
    for store in list_runs(runs_dir):
        if current is not None and store.run_id == current.run_id:
            continue
        try:
            if store.manifest_record.receipts.experiment != experiment:
                continue
            why = why_invalid(store)
        except DamagedRun:
            why = "damaged"
        if why is not None:
            skipped.append(f"{store.run_id} ({why})")
        elif len(chosen) < window - (current is not None):
            chosen.append(store)
    chosen.reverse()
    return ([*chosen, current] if current is not None else chosen), skipped


def _observations(stores: Sequence[RunStore], rules: list[GateRule]) -> Iterator[tuple[GateRule, str, Observation]]:
    """Every observation of every item on every rule, oldest first, streaming from the stores."""
    for store in stores:
        receipts = store.manifest_record.receipts  # once per run, not per record
        for result in sorted(store.iter_all_records(), key=lambda r: (r.repeat, r.index)):
            for rule in rules:
                score = result.score(rule.metric)
                if score is None or score.value is None or isinstance(score.value, str):
                    continue
                value = float(score.value)
                yield (
                    rule,
                    result.item_id,
                    Observation(store.run_id, result.repeat, conditions(receipts, result), value),
                )


def _histories(stores: Sequence[RunStore], rules: list[GateRule], settings: Any) -> list[FlakyItem]:
    """Count flips in one streaming pass; read again the histories of only the items found flaky."""
    counter = FlipCounter()
    for rule, item_id, observation in _observations(stores, rules):
        counter.add(rule, item_id, observation)
    flaky = counter.flaky(threshold=settings.threshold, min_observations=settings.min_observations)
    if not flaky:
        return []
    histories: dict[tuple[str, str], list[Observation]] = {key: [] for key in sorted(flaky)}
    for rule, item_id, observation in _observations(stores, rules):
        if (rule.name, item_id) in histories:
            histories[(rule.name, item_id)].append(observation)
    by_rule = {rule.name: rule for rule in rules}
    return flaky_items(
        ((by_rule[gate], item_id, obs) for (gate, item_id), obs in histories.items()),
        threshold=settings.threshold,
        min_observations=settings.min_observations,
    )


def find_flaky(
    config: ProjectConfig, runs_dir: Path, experiment: str, *, current: RunStore | None = None
) -> FlakyReport:
    """Return the flaky items of `experiment` over its stored runs (with `current`, the run being summarised)."""
    if experiment not in config.experiments:
        raise ScoregateError(
            f"no experiment {experiment!r} under `experiments:` in scoregate.yaml"
            + unknown_name(experiment, config.experiments),
            hint="`scoregate run` lists the experiments",
        )
    settings = config.settings.flaky
    rules = every_item_rules(config, experiment)
    stores, skipped = _runs_of(runs_dir, experiment, settings.window_runs, current)
    found = _histories(stores, rules, settings) if rules else []
    return FlakyReport(
        experiment, settings.threshold, settings.min_observations, settings.window_runs, len(stores),
        [s.run_id for s in stores], skipped, [r.name for r in rules], found,
    )  # fmt: skip


def quarantine_hint(experiment: str) -> str:
    """The command that lists an experiment's flaky items, as a gate's detail names it after their ids."""
    return f"`scoregate items flaky {experiment}`"


def flaky_report(root: Path, experiment: str) -> FlakyReport:
    """Return the flaky items of `experiment` in the project at `root` (what `scoregate items flaky` lists)."""
    from scoregate.app.run.run_options import runs_dir
    from scoregate.tracks.project import load_project

    project = load_project(root)
    return find_flaky(project.config, runs_dir(project), experiment)
