"""The regression gate: is this run non-inferior to the current production run, item by item?

Which version holds the label (`compare_to`, default `production`), per prompt the run used:
1. the last record in `promotions.jsonl` (project root) whose `prompt` and `label` match: its
   `version` holds the label (promote and rollback records both name the version that holds it after
   the move) — this is the authority, since `scoregate promote` writes it;
2. without such a record, the labels the runs themselves recorded in their receipts (from Langfuse
   for a prompt fetched from it, from the prompt file otherwise): the newest run whose receipts show
   the prompt carrying the label names its version.

The baseline is the newest run (by `started_at`) in the local run store that is valid: not the run
being gated, finished, run on the whole dataset (no --limit), on the same dataset name and content
hash, with every prompt of the gated run at the version holding the label, and scored by the same
evaluators (versions and file hashes), composites and judge model — otherwise a difference could
come from the scorers, not the prompt. No baseline, too few paired items or a coverage below the
floor makes the gate INCOMPLETE, never a pass.

The test is paired non-inferiority (`compare_paired(margin=…)`), the rule `scoregate compare` uses for
a primary metric: items measured in both runs are paired by id; the gate passes when the lower bound
of the CI of the gain (candidate − baseline, or baseline − candidate for a metric bounded from above)
is above −margin, and its detail gives the same verdict word `compare` prints for that interval.

This module decides from values; reading promotions.jsonl and the run store is `scoregate.app.regression_gate`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from scoregate.analysis.gates import GateResult, GateStatus, new_gate_result
from scoregate.analysis.paired import compare_paired
from scoregate.analysis.run_source import RunSource
from scoregate.catalog.models import Direction
from scoregate.store.records import ItemResult

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, Receipts

REGRESSION_STAT = "paired_noninferiority"
DEFAULT_LABEL = "production"
DEFAULT_MARGIN = 0.2
PROMOTIONS_LOG = "promotions.jsonl"


class GateLike(Protocol):
    """The GateSpec fields the regression gate reads (`compare_to` and `margin` are read with defaults)."""

    @property
    def name(self) -> str:
        """The gate's name."""

    @property
    def metric(self) -> str:
        """The score compared."""

    @property
    def op(self) -> str:
        """`<=`/`<`: lower is better; otherwise higher is better."""

    @property
    def min_coverage(self) -> float | None:
        """Paired-coverage floor; None: the project's min_coverage."""


def is_regression_gate(gate: Any) -> bool:
    """True when a gate compares against another run (`compare_to` set, or stat paired_noninferiority)."""
    return getattr(gate, "compare_to", None) is not None or getattr(gate, "stat", None) == REGRESSION_STAT


@dataclass(frozen=True)
class LabelHolder:
    """The version of one prompt that holds a label, and how that was decided."""

    prompt: str
    version: str | None
    source: str


def label_holders(
    prompts: Iterable[str], label: str, *, records: Sequence[dict[str, Any]], stores: Sequence[RunSource]
) -> dict[str, LabelHolder]:
    """Return, per prompt, the version holding `label` (see the module docstring for the rule): `records` are
    promotions.jsonl's, oldest first; `stores` the other runs, newest first."""
    holders = {}
    manifests: dict[str, Manifest] = {}  # each run's manifest read once, only when the search reaches it
    for prompt in prompts:
        moves = [r for r in records if r.get("prompt") == prompt and r.get("label") == label and "version" in r]
        if moves:
            last = moves[-1]
            source = f"{PROMOTIONS_LOG}: {last.get('action', 'move')} at {last.get('time', '?')}"
            holders[prompt] = LabelHolder(prompt, str(last["version"]), source)
            continue
        promote = f"scoregate promote {prompt}" + ("" if label == DEFAULT_LABEL else f" --label {label}")
        holders[prompt] = LabelHolder(
            prompt,
            None,
            f"no {label!r} move of {prompt} in {PROMOTIONS_LOG}, no run records it: promote a version with "
            f"`{promote}` (with Langfuse or without)",
        )
        for store in stores:  # newest first
            if store.run_id not in manifests:
                manifests[store.run_id] = store.manifest_record
            info = manifests[store.run_id].receipts.prompts.get(prompt)
            if info and label in info.labels:
                source = f"labels recorded by run {store.run_id}"
                holders[prompt] = LabelHolder(prompt, str(info.version), source)
                break
    return holders


def _dataset_version(receipts: Receipts) -> tuple[str | None, str | None]:
    dataset = receipts.dataset
    return (dataset.name, dataset.content_hash) if dataset else (None, None)


def why_not_baseline(manifest: Manifest, current: Manifest, holders: dict[str, LabelHolder]) -> str | None:
    """Why a stored run cannot be the baseline of the run with manifest `current`; None when it can."""
    receipts, now = manifest.receipts, current.receipts
    if manifest.status != "finished":
        return f"status {manifest.status}"
    if manifest.options.limit is not None:
        return f"ran only {manifest.options.limit} items (--limit)"
    if _dataset_version(receipts) != _dataset_version(now):
        return "another dataset version"
    prompts = receipts.prompts
    if set(prompts) != set(holders):
        return f"other prompts ({', '.join(prompts)})"
    for name, holder in holders.items():
        if str(prompts[name].version) != holder.version:
            return f"{name}@{prompts[name].version}, not the labelled version"
    if receipts.evaluators != now.evaluators:
        return "other evaluators than this run"
    if receipts.composites != now.composites:
        return "other composites than this run"
    judge, judge_now = receipts.judge_model, now.judge_model
    if (judge.model if judge else None) != (judge_now.model if judge_now else None):
        return "another judge model"
    return None


def metric_values(results: Iterable[ItemResult], metric: str) -> dict[str, float | None]:
    """Item id → the metric's value (None when not measured), in dataset order so the bootstrap is reproducible."""
    rows: list[tuple[int, str, float | None]] = []
    for result in results:
        score = result.score(metric)
        value = None if score is None or isinstance(score.value, str) else score.value
        rows.append((result.index, result.item_id, None if value is None else float(value)))
    return {item_id: value for _, item_id, value in sorted(rows, key=lambda row: row[0])}


def compared_label(gate: GateLike) -> str:
    """The label whose version the gate compares against (`compare_to`, default production)."""
    return getattr(gate, "compare_to", None) or DEFAULT_LABEL


def _margin(gate: GateLike) -> float:
    margin = getattr(gate, "margin", None)
    return float(DEFAULT_MARGIN if margin is None else margin)


def _result(
    gate: GateLike, status: GateStatus, observed: float | None, coverage: float | None, detail: str
) -> GateResult:
    return new_gate_result(
        gate.name, gate.metric, REGRESSION_STAT, ">", -_margin(gate), observed, coverage, status, detail
    )


def without_baseline(gate: GateLike, problem: str) -> GateResult:
    """The gate's result when no run can be its baseline: INCOMPLETE, saying why."""
    return _result(gate, "incomplete", None, None, f"no baseline: {problem}")


def judge_regression(
    gate: GateLike,
    baseline: Mapping[str, float | None],
    current: Mapping[str, float | None],
    *,
    against: str,
    min_coverage: float = 0.8,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> GateResult:
    """Judge a regression gate on the metric's values per item of the baseline and the current run.

    `observed` is the lower CI bound of the gain and the rule reads `ci_low(gain) > −margin`;
    `coverage` is the share of the current run's items paired with a measured baseline value;
    `against` names the baseline in the detail (`vs production run … (prompt@version)`).
    """
    margin = _margin(gate)
    floor = gate.min_coverage if gate.min_coverage is not None else min_coverage
    direction: Direction = "lower" if gate.op in ("<=", "<") else "higher"
    paired = [(baseline[i], v) for i, v in current.items() if i in baseline]
    measured = [(a, b) for a, b in paired if a is not None and b is not None]
    coverage = len(measured) / len(current) if current else None
    if len(measured) < 2:
        return _result(gate, "incomplete", None, coverage, f"{against}: {len(measured)} item(s) measured in both runs")
    if coverage is not None and coverage < floor:
        detail = f"{against}: paired coverage {coverage:.0%} is below the floor {floor:.0%}"
        return _result(gate, "incomplete", None, coverage, detail)
    stats = compare_paired(
        [a for a, _ in measured], [b for _, b in measured],
        margin=margin, direction=direction, alpha=1 - confidence, resamples=resamples, seed=seed,
    )  # fmt: skip
    assert stats.diff_ci_low is not None and stats.diff_ci_high is not None and stats.diff is not None
    gain_low = stats.diff_ci_low if direction == "higher" else -stats.diff_ci_high
    status: GateStatus = "pass" if stats.non_inferior else "fail"
    finding = "non-inferior" if stats.non_inferior else "non-inferiority not shown"
    words = finding if stats.verdict == finding else f"{stats.verdict}, {finding}"  # never `non-inferior` twice
    detail = (
        f"{against}: {len(measured)} paired items, Δ {stats.diff:+.3g} "
        f"({confidence:.0%} CI {stats.diff_ci_low:+.3g} to {stats.diff_ci_high:+.3g}); {words} within the margin "
        f"{margin:g}"
    )
    return _result(gate, status, gain_low, coverage, detail)
