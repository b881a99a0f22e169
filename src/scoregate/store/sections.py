"""The blocks a feature adds to the run record, as types: a shard's and a merge's place in a sharded run, a
stop-early run's plan and outcome, the flaky items kept out of gates, a slice gate's rows, a cascade judge's figures.

Each reads what the writers (`app/shards.py`, `app/merge.py`, `app/stop_early.py`, `app/flaky_items.py`,
`analysis/slices.py`) put in the files; like every `Record`, a key it does not name is kept and the keys are
written back in the file's order.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from scoregate.store.record_base import Number, Record


class ShardBlock(Record):
    """A shard's place in its run: manifest.json `shard` of `runs/<id>/shards/<I>-of-<N>/` (`app.run.shards`)."""

    index: int
    count: int
    run_id: str | None = None
    """The whole run's id (every shard of a run carries it)."""
    group: str | None = None
    """The group the shards were started under (`run --group`), or None."""

    @property
    def name(self) -> str:
        """The shard's folder name, `<I>-of-<N>`."""
        return f"{self.index}-of-{self.count}"


class MergedShard(Record):
    """One shard a merged run was made of: where it was read and the status it had."""

    directory: str | None = None
    status: str | None = None


class MergeBlock(Record):
    """A merged run's manifest.json `merge` (`app.merge`): its shards, those missing, and the digest of its inputs."""

    count: int | None = None
    shards: dict[str, MergedShard] = Field(default_factory=dict)
    missing_shards: list[str] = Field(default_factory=list)
    missing_items: int | None = None
    inputs: str | None = None
    """The digest of every byte read from the shards; None until the merge (and its mirrors) finished."""


class IncompleteBlock(Record):
    """summary.json `incomplete` of a merged run with holes: the items and shards missing, and the items planned."""

    missing_items: list[str] = Field(default_factory=list)
    missing_shards: list[str] = Field(default_factory=list)
    planned_items: int | None = None


class StopRuleRecord(Record):
    """The sequential test a stop-early run asked (`analysis.sequential_stop.StopRule.to_dict`)."""

    lo: Number | None = None
    hi: Number | None = None
    question: str | None = None
    margin: Number | None = None
    direction: str | None = None
    alpha: Number = 0.05
    method: str | None = None
    max_items: int | None = None
    max_cost: Number | None = None
    method_reference: str | None = None
    rule: str | None = None
    """The rule in words."""


class StopDecisionRecord(Record):
    """The stop rule read at a stop-early run's last look (`StopDecision.to_dict` less its rule, or a cost cap)."""

    settled: bool | None = None
    verdict: str | None = None
    stop: bool | None = None
    stop_reason: str | None = None
    n: int | None = None
    total: int | None = None
    lower: Number | None = None
    upper: Number | None = None
    mean: Number | None = None
    cost: Number | None = None
    progress: str | None = None
    items_run: int | None = None


class StopEarlyRecord(Record):
    """manifest.json `stop_early` (`app.run.stop_early`): what the run compares against, how, and its last decision."""

    against: str | None = None
    gate: str | None = None
    metric: str | None = None
    rule: StopRuleRecord = StopRuleRecord()
    order_seed: int | None = None
    batch: int | None = None
    items: int | None = None
    """The items the run would run to the end."""
    paired_items: int | None = None
    decision: StopDecisionRecord | None = None
    continued_at: str | None = None
    """When `run --resume` took a stopped run on to the full dataset; its summary is then the full run's."""
    corrected: dict[str, Any] | None = None
    """With a deciding gate on the corrected estimate: the judge's Youden interval (`analysis.corrected_sequential`)."""

    def ended_early(self) -> bool:
        """Whether the stop rule or a cap ended the run before its last item (and no resume went on since)."""
        decision = self.decision
        if decision is None or not decision.stop or self.continued_at is not None:
            return False
        return decision.stop_reason != "all items"


class StopEarlySection(Record):
    """summary.json `stop_early`: where a stop-early run stopped, the verdict, the bounds and the rule."""

    against: str | None = None
    gate: str | None = None
    metric: str | None = None
    rule: StopRuleRecord = StopRuleRecord()
    order_seed: int | None = None
    batch: int | None = None
    stopped: bool | None = None
    items_run: int | None = None
    items_total: int | None = None
    progress: str | None = None
    """`stopped at 10 of 60` (or `ran at`)."""
    paired_differences: int | None = None
    verdict: str = "inconclusive"
    stop_reason: str | None = None
    lower: Number | None = None
    upper: Number | None = None
    mean_difference: Number | None = None
    cost_usd: Number | None = None
    corrected: dict[str, Any] | None = None
    """With a gate on the corrected estimate: the judge's Youden interval (`analysis.corrected_sequential`); the
    bounds are then the corrected difference's, at the whole 1 − alpha (the rule's alpha is the run's half)."""


class FlakyItemRecord(Record):
    """An item whose verdict on a gate flips (`analysis.flaky.FlakyItem`): its figures and its history."""

    item_id: str
    gate: str
    metric: str | None = None
    flip_rate: Number | None = None
    flips: int | None = None
    comparisons: int | None = None
    history: list[dict[str, Any]] = Field(default_factory=list)


class FlakySection(Record):
    """summary.json `flaky` (`app.run.flaky_items.FlakyReport`): the flaky items and what was read to find them."""

    experiment: str | None = None
    threshold: Number | None = None
    min_observations: int | None = None
    window_runs: int | None = None
    runs: int | None = None
    run_ids: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    gates: list[str] = Field(default_factory=list)
    items: list[FlakyItemRecord] = Field(default_factory=list)


class SliceRow(Record):
    """One slice of a slice gate (`analysis.slices.SliceResult.to_dict`): the difference, its CI and verdict."""

    field: str | None = None
    value: str | None = None
    n: int | None = None
    status: str | None = None
    verdict: str | None = None
    diff: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    ci_level: Number | None = None
    p_holm: Number | None = None
    margin: Number | None = None

    @property
    def name(self) -> str:
        """`field=value`."""
        return f"{self.field}={self.value}"


class CorrectedStats(Record):
    """A judge score's bias-corrected mean (`analysis.corrected_estimators`), or why it is null."""

    method: str | None = None
    method_name: str | None = None
    """The method as a person reads it: `PPI++`, `sensitivity/specificity`."""
    value: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    confidence: Number | None = None
    n_run: int | None = None
    n_labels: int | None = None
    reason: str | None = None
    details: dict[str, Number | None] = Field(default_factory=dict)
    calibrated_at: str | None = None
    """When the calibration set it rests on was saved (`calibrations/<evaluator>.json`)."""
    human_key: str | None = None


class RepeatsSection(Record):
    """summary.json `repeats` of a `run --repeat K` run (`analysis.consistency`): how consistent the repeats were."""

    k: int
    items: int | None = None
    items_complete: int | None = None
    """Items whose K repeats all have a record."""
    failed_records: int | None = None
    """Records (of every repeat) whose newest version failed; None in a run summarised before it was counted."""
    exact_match_rate: Number | None = None
    modal_agreement_mean: Number | None = None
    scores: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Each numeric score's spread over the repeats (`std_mean`, `std_max`, pass@k...)."""


class CascadeJudgeRecord(Record):
    """summary.json `cascade.<evaluator>` (`app.run.cascade_report`): what a cascade judge's first judge kept in the
    run, the guarantee it kept it under and the judge cost saved, from the run's telemetry; a null figure has its
    reason (`reason` for the guarantee and the share kept, `cost_reason` for the cost saved)."""

    first_model: str | None = None
    strong_model: str | None = None
    threshold: Number | None = None
    """The first judge's confidence threshold the run used (None: none held, the strong judge scored every item)."""
    target: Number | None = None
    delta: Number | None = None
    guaranteed_level: Number | None = None
    """Agreement with humans guaranteed on the kept items, with probability 1 − delta (None without a threshold)."""
    guarantee: str | None = None
    calibration_labels: int | None = None
    """The labelled items the threshold was chosen on."""
    items: int | None = None
    kept: int | None = None
    escalated: int | None = None
    share_kept: Number | None = None
    first_cost_usd: Number | None = None
    strong_cost_usd: Number | None = None
    cost_saved_usd: Number | None = None
    cost_saved_share: Number | None = None
    """Of what the strong judge alone would have cost on every item."""
    reason: str | None = None
    cost_reason: str | None = None
    cost_basis: str | None = None
    """Where the strong judge's cost per item came from when no item of the run went to it (the calibration's)."""
