"""Compare two stored runs item by item: primary metrics read from their CI, the rest Holm-adjusted.

Run A is the baseline and run B the candidate; every difference is B − A. Only items present in both
runs are paired (the others are counted, not silently dropped), and for each score only the items
measured in both runs. The primary metrics are the caller's (`--metric`), else those the runs' gates
use; every other score is secondary (see `scoregate.analysis.paired.VERDICT_RULE`). A score's
direction comes from the caller (`--lower-is-better`), else the evaluator files (`direction:`), else
the gates either run recorded (`<=`/`<` on a metric means lower is better), else its name, else higher.
"""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from scoregate.analysis.columns import FloatColumn
from scoregate.analysis.paired import VERDICT_RULE, WILCOXON_VARIANT, PairedComparison, compare_many
from scoregate.analysis.run_source import RunSource, recorded_gates
from scoregate.catalog.directions import RUN_METRIC_DIRECTIONS, default_direction
from scoregate.catalog.models import Direction
from scoregate.errors import ScoregateError
from scoregate.store.gate_metrics import gated_metrics
from scoregate.store.records import ItemResult

if TYPE_CHECKING:
    from scoregate.store.record import Manifest

NUMERIC_TYPES = ("numeric", "boolean")


@dataclass(frozen=True)
class ScoreComparison:
    """One score compared over the items measured in both runs."""

    name: str
    shared_unmeasured: int
    """Items in both runs where this score is null on at least one side (left out of `stats`)."""
    direction: Direction
    """`higher` or `lower` is better, or `none` (described, never better or worse)."""
    direction_source: str
    stats: PairedComparison

    @property
    def primary(self) -> bool:
        """True for a primary metric (its CI unadjusted); False for a secondary, exploratory one."""
        return self.stats.role == "primary"

    @property
    def sentence(self) -> str:
        """The verdict in plain language, with the evidence behind it."""
        return verdict_sentence(self.stats)

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready): the statistics flattened beside the score's name."""
        return {
            "name": self.name,
            "shared_unmeasured": self.shared_unmeasured,
            "direction": self.direction,
            "direction_source": self.direction_source,
            **self.stats.to_dict(),
            "sentence": self.sentence,
        }


@dataclass(frozen=True)
class RunSide:
    """What identifies one compared run."""

    run_id: str
    items: int
    only_here: int
    dataset: str | None
    dataset_hash: str | None
    prompts: dict[str, str]
    experiment: str | None
    model: str | None = None
    """The model's name in scoregate.yaml."""
    limit: int | None = None
    """The run's `--limit` (its first N dataset items), as its manifest records it; None when it ran them all."""


@dataclass
class RunComparison:
    """Run B (candidate) against run A (baseline), paired by item id."""

    a: RunSide
    b: RunSide
    shared_items: int
    alpha: float
    scores: dict[str, ScoreComparison]
    skipped_scores: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    margins: dict[str, float] = field(default_factory=dict)
    primary: list[str] = field(default_factory=list)
    primary_source: str = ""
    verdict_rule: ClassVar[str] = VERDICT_RULE
    """How a primary score's verdict follows its CI, and how the secondary scores are adjusted."""
    wilcoxon_variant: ClassVar[str] = WILCOXON_VARIANT
    """The signed-rank test beside each CI."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return {
            "run_a": asdict(self.a),
            "run_b": asdict(self.b),
            "shared_items": self.shared_items,
            "alpha": self.alpha,
            "margins": self.margins,
            "primary": self.primary,
            "primary_source": self.primary_source,
            "wilcoxon": WILCOXON_VARIANT,
            "scores": {name: s.to_dict() for name, s in self.scores.items()},
            "skipped_scores": self.skipped_scores,
            "warnings": self.warnings,
        }


def _fmt(x: float | None, sign: str = "+") -> str:
    """3 significant digits, and never an exponent from 100 up (127, not 1.27e+02)."""
    if x is None:
        return "n/a"
    return f"{x:{sign}.0f}" if abs(x) >= 100 else f"{x:{sign}.3g}"


VERDICT_WORDS = {
    "better": "B is better",
    "worse": "B is worse",
    "equivalent": "equivalent",
    "non-inferior": "B is non-inferior",
    "inconclusive": "inconclusive",
    "increased": "B is higher (no direction: not better or worse)",
    "decreased": "B is lower (no direction: not better or worse)",
    "no change": "no change",
    "cannot compare": "cannot compare",
}


def verdict_sentence(s: PairedComparison) -> str:
    """Return the verdict in words with the interval it follows, e.g. "B is better: +0.4 (95% CI …)"."""
    if s.diff_ci_low is None:
        return f"cannot compare: {s.reason}"
    if s.verdict == "no change":
        return f"no change: every one of the {s.n} paired items scored the same in both runs (nothing to test)"
    adjusted = " Holm-adjusted" if s.role == "secondary" else ""
    ci = f"{_fmt(s.diff)} (B − A;{adjusted} {s.ci_level:.1%} CI {_fmt(s.diff_ci_low)} to {_fmt(s.diff_ci_high)})"
    ci = ci.replace(".0% CI", "% CI")
    words = VERDICT_WORDS.get(s.verdict, s.verdict)
    if s.margin is not None:
        words += f" (margin {s.margin:g}" + (", non-inferior)" if s.non_inferior else ", non-inferiority not shown)")
    text = f"{words}: {ci}"
    if s.verdict == "inconclusive" and s.mde is not None:
        text += f"; with {s.n} items only a difference of about {_fmt(s.mde, '')} or more is detectable"
    if s.diff is not None and s.mde is None:
        text += f"; every item changed by exactly {_fmt(s.diff)}, so the t-test, dz and MDE are undefined"
    if s.role == "secondary":
        text += " [exploratory]"
    return text


def _numeric(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    return float(value)


@dataclass
class _RunValues:
    """One run's numeric scores per item, in dataset order: one compact column per score, and how items pair."""

    items: int = 0
    columns: dict[str, FloatColumn] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    positions: dict[str, int] = field(default_factory=dict)
    """Item id → position, for the run the other one is paired against."""
    shared: tuple[array[int], array[int]] = field(default_factory=lambda: (array("q"), array("q")))
    """Positions (here, there) of the items the other run has too, in this run's order."""


def _collect(store: RunSource, *, pair_with: dict[str, int] | None = None) -> _RunValues:
    """Read a run's numeric scores (9 bytes per item and score, streamed from disk) and each score's data type;
    with `pair_with` (the other run's positions), where each shared item sits in both runs, else this run's."""
    run = _RunValues()
    for position, result in enumerate(store.iter_results()):
        row = _item_values(result, run.types)
        for name, value in row.items():
            if name not in run.columns:  # a score first met here: the items before it lack it
                run.columns[name] = FloatColumn([None] * position)
            run.columns[name].append(value)
        for name, column in run.columns.items():
            if name not in row:
                column.append(None)
        if pair_with is None:
            run.positions[result.item_id] = position
        elif (there := pair_with.get(result.item_id)) is not None:
            run.shared[0].append(position)
            run.shared[1].append(there)
        run.items += 1
    return run


def _item_values(result: ItemResult, types: dict[str, str]) -> dict[str, float | None]:
    row: dict[str, float | None] = {}
    for score in result.scores:
        types.setdefault(score.name, score.data_type)
        if score.data_type in NUMERIC_TYPES:
            row[score.name] = _numeric(score.value)
    return row


def _paired_values(
    a: FloatColumn | None, b: FloatColumn | None, ia: np.ndarray, ib: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The values of the shared items (positions `ia` in A, `ib` in B) measured in both runs."""
    if a is None or b is None:
        return np.zeros(0), np.zeros(0)
    (xa, ma), (xb, mb) = a.arrays(), b.arrays()
    both = ma[ia] & mb[ib]
    return xa[ia][both], xb[ib][both]


def _side(run_id: str, manifest: Manifest, items: int, only_here: int) -> RunSide:
    receipts, dataset, model = manifest.receipts, manifest.receipts.dataset, manifest.receipts.model
    prompts = {name: str(version) for name, version in receipts.prompt_versions().items()}
    return RunSide(
        run_id, items, only_here, dataset.name if dataset else None, dataset.content_hash if dataset else None,
        prompts, receipts.experiment, model.name if model else None, manifest.options.limit,
    )  # fmt: skip


def gate_directions(manifests: Iterable[Manifest]) -> dict[str, str]:
    """Return metric → gate name for metrics some recorded gate bounds from above (lower is better)."""
    lower: dict[str, str] = {}
    for manifest in manifests:
        for gate in recorded_gates(manifest.receipts):
            if gate.get("op") in ("<=", "<") and gate.get("metric"):
                lower.setdefault(gate["metric"], str(gate.get("name")))
    return lower


def resolve_directions(
    names: Iterable[str],
    manifests: Iterable[Manifest],
    *,
    declared: Mapping[str, Direction] | None = None,
    lower_is_better: Collection[str] = (),
) -> dict[str, tuple[Direction, str]]:
    """Return score → (direction, where it came from): caller, evaluator file, a gate bound, the name, default."""
    lower = gate_directions(manifests)
    declared = declared or {}
    out: dict[str, tuple[Direction, str]] = {}
    for name in names:
        if name in lower_is_better:
            out[name] = ("lower", "given by the caller")
        elif name in declared:
            out[name] = (declared[name], "evaluator file")
        elif name in lower:
            out[name] = ("lower", f"gate {lower[name]} bounds it from above")
        elif name in RUN_METRIC_DIRECTIONS or default_direction(name) != "higher":
            out[name] = (default_direction(name), "by name")
        else:
            out[name] = ("higher", "default")
    return out


def _setup_warnings(a: RunSide, b: RunSide, ma: Manifest, mb: Manifest) -> list[str]:
    warnings = []
    if (a.dataset, a.dataset_hash) != (b.dataset, b.dataset_hash):
        warnings.append(
            f"the runs used different datasets ({a.dataset} {str(a.dataset_hash)[:12]} vs "
            f"{b.dataset} {str(b.dataset_hash)[:12]}); items are paired by id only"
        )
    ra, rb = ma.receipts, mb.receipts
    if ra.evaluators != rb.evaluators:
        warnings.append("the runs used different evaluator versions: a difference may come from the evaluators")
    judge_a = ra.judge_model.model if ra.judge_model else None
    judge_b = rb.judge_model.model if rb.judge_model else None
    if judge_a != judge_b:
        warnings.append(f"the runs were judged by different models ({judge_a} vs {judge_b})")
    return warnings


def compare_runs(
    store_a: RunSource,
    store_b: RunSource,
    *,
    metrics: Sequence[str] = (),
    margins: Mapping[str, float] | None = None,
    directions: Mapping[str, Direction] | None = None,
    lower_is_better: Collection[str] = (),
    alpha: float = 0.05,
    resamples: int = 2000,
    seed: int = 0,
) -> RunComparison:
    """Return the paired comparison of run B (candidate) against run A (baseline) on every shared numeric score.

    `metrics` are the primary metrics (default: those the runs' gates use, when compared); every
    other score is secondary (Holm-adjusted). `margins` (score → largest tolerated loss) add the
    equivalence / non-inferiority words; `directions` (score → direction, from the evaluator files)
    and `lower_is_better` say which way a score improves. Raise ScoregateError when the runs share no
    item, or a metric or margin names a score that is not compared.
    """
    run_b = _collect(store_b)
    run_a = _collect(store_a, pair_with=run_b.positions)
    run_b.positions.clear()
    types_a, types_b = run_a.types, run_b.types
    ia, ib = (np.array(positions, dtype=np.int64) for positions in run_a.shared)
    shared = len(ia)
    manifests = [store_a.manifest_record, store_b.manifest_record]
    side_a = _side(store_a.run_id, manifests[0], run_a.items, run_a.items - shared)
    side_b = _side(store_b.run_id, manifests[1], run_b.items, run_b.items - shared)
    if not shared:
        raise ScoregateError(
            f"runs {store_a.run_id} and {store_b.run_id} share no item id, so nothing can be paired",
            hint="compare two runs of the same dataset",
        )
    skipped: dict[str, str] = {}
    names: list[str] = []
    for name in dict.fromkeys([*types_a, *types_b]):
        ta, tb = types_a.get(name), types_b.get(name)
        if ta is None or tb is None:
            skipped[name] = f"only in run {store_a.run_id if tb is None else store_b.run_id}"
        elif ta not in NUMERIC_TYPES or tb not in NUMERIC_TYPES:
            skipped[name] = f"{ta if ta not in NUMERIC_TYPES else tb} score: no mean to compare"
        else:
            names.append(name)
    margins = dict(margins or {})
    for option, asked in (("--margin", sorted(margins)), ("--metric", list(metrics))):
        unknown = [m for m in asked if m not in names]
        if unknown:
            raise ScoregateError(
                f"{option} names score(s) not compared: {', '.join(unknown)}",
                hint=f"scores both runs have: {', '.join(names) or 'none'}",
            )
    if metrics:
        primary, primary_source = list(dict.fromkeys(metrics)), "--metric"
    else:
        primary = [m for m in gated_metrics(manifests) if m in names]
        primary_source = "the metrics the runs' gates use" if primary else "none: no gate uses a compared score"
    pairs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    unmeasured: dict[str, int] = {}
    for name in names:
        pairs[name] = _paired_values(run_a.columns.get(name), run_b.columns.get(name), ia, ib)
        unmeasured[name] = shared - len(pairs[name][0])
    resolved = resolve_directions(names, manifests, declared=directions, lower_is_better=lower_is_better)
    as_sequences = cast("Mapping[str, tuple[Sequence[float], Sequence[float]]]", pairs)  # numpy arrays are read as such
    stats = compare_many(
        as_sequences, primary=primary, margins=margins, directions={n: d for n, (d, _) in resolved.items()},
        alpha=alpha, resamples=resamples, seed=seed,
    )  # fmt: skip
    order = [*primary, *(n for n in names if n not in primary)]
    scores = {
        name: ScoreComparison(name, unmeasured[name], resolved[name][0], resolved[name][1], stats[name])
        for name in order
    }
    return RunComparison(
        a=side_a,
        b=side_b,
        shared_items=shared,
        alpha=alpha,
        scores=scores,
        skipped_scores=skipped,
        warnings=_setup_warnings(side_a, side_b, *manifests),
        margins=margins,
        primary=primary,
        primary_source=primary_source,
    )


def parse_margins(specs: Iterable[str]) -> dict[str, float]:
    """Parse `SCORE=VALUE` strings into score → margin; raise ScoregateError on a malformed one."""
    margins: dict[str, float] = {}
    for spec in specs:
        name, sep, raw = spec.partition("=")
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not sep or not name.strip() or not value >= 0:
            raise ScoregateError(
                f"--margin {spec!r} is not SCORE=VALUE with a value ≥ 0", hint="e.g. --margin WeightedQuality=0.2"
            )
        margins[name.strip()] = value
    return margins
