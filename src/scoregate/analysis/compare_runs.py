"""Compare two stored runs item by item: per shared score, paired statistics with Holm across scores.

Run A is the baseline and run B the candidate; every difference is B − A. Only items present in both
runs are paired (the others are counted, not silently dropped), and for each score only the items
measured in both runs. A score's direction (higher or lower is better) comes from the caller, else
from the gates either run recorded (`<=`/`<` on a metric means lower is better), else higher.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.analysis.paired import PairedComparison, compare_many
from scoregate.errors import ScoregateError
from scoregate.invalidation import refuse_invalid
from scoregate.records import ItemResult
from scoregate.store import RunStore

if TYPE_CHECKING:
    from scoregate.analysis.preference import PreferenceResult

NUMERIC_TYPES = ("numeric", "boolean")


@dataclass(frozen=True)
class ScoreComparison:
    """One score compared over the items measured in both runs."""

    name: str
    shared_unmeasured: int
    """Items in both runs where this score is null on at least one side (left out of `stats`)."""
    direction: str
    """"higher is better" or "lower is better"."""
    direction_source: str
    stats: PairedComparison

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

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return {
            "run_a": asdict(self.a),
            "run_b": asdict(self.b),
            "shared_items": self.shared_items,
            "alpha": self.alpha,
            "margins": self.margins,
            "scores": {name: s.to_dict() for name, s in self.scores.items()},
            "skipped_scores": self.skipped_scores,
            "warnings": self.warnings,
        }


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3g}"


def verdict_sentence(s: PairedComparison) -> str:
    """Return the plain-language verdict of a paired comparison, e.g. "B is better: +0.4 (95% CI …)"."""
    if s.reason is not None:
        return f"cannot compare: {s.reason}"
    level = f"{1 - s.alpha:.0%}"
    ci = f"{_fmt(s.diff)} (B − A; {level} CI {_fmt(s.diff_ci_low)} to {_fmt(s.diff_ci_high)})"
    p = s.p_adjusted if s.p_adjusted is not None else s.wilcoxon_p
    p_text = "p n/a (no item changed)" if p is None else f"Holm-adjusted Wilcoxon p = {p:.3g}"
    if s.margin is not None:
        bound = f"margin {s.margin:g}"
        if s.verdict == "better":
            return f"B is better (and non-inferior within the {bound}): {ci}; {p_text}"
        if s.verdict == "non-inferior":
            return f"B is non-inferior: not worse than A by more than the {bound}: {ci}"
        return f"non-inferiority not shown: B may be worse than A by more than the {bound}: {ci}"
    if s.verdict == "better":
        return f"B is better: {ci}; {p_text}"
    if s.verdict == "worse":
        return f"B is worse: {ci}; {p_text}"
    mde = "" if s.mde is None else f"; with {s.n} items only a difference of about {s.mde:.2g} or more is detectable"
    return f"no detectable difference: {ci}; {p_text}{mde}"


def _numeric(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    return float(value)


def _collect(store: RunStore) -> tuple[dict[str, dict[str, float | None]], dict[str, str]]:
    """Return item id → {score: value} for numeric scores (in dataset order), and score name → data type."""
    rows: list[tuple[int, str, dict[str, float | None]]] = []
    types: dict[str, str] = {}
    for result in store.iter_results():
        rows.append((result.index, result.item_id, _item_values(result, types)))
    return {item_id: row for _, item_id, row in sorted(rows, key=lambda r: r[0])}, types


def _item_values(result: ItemResult, types: dict[str, str]) -> dict[str, float | None]:
    row: dict[str, float | None] = {}
    for score in result.scores:
        types.setdefault(score.name, score.data_type)
        if score.data_type in NUMERIC_TYPES:
            row[score.name] = _numeric(score.value)
    return row


def _side(store: RunStore, items: int, only_here: int) -> RunSide:
    receipts = store.manifest.get("receipts", {})
    dataset = receipts.get("dataset") or {}
    prompts = {name: str(info.get("version")) for name, info in (receipts.get("prompts") or {}).items()}
    return RunSide(
        store.run_id, items, only_here, dataset.get("name"), dataset.get("content_hash"), prompts,
        receipts.get("experiment"),
    )  # fmt: skip


def gate_directions(manifests: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Return metric → gate name for metrics some recorded gate bounds from above (lower is better)."""
    lower: dict[str, str] = {}
    for manifest in manifests:
        for gate in manifest.get("receipts", {}).get("gates") or []:
            if gate.get("op") in ("<=", "<") and gate.get("metric"):
                lower.setdefault(gate["metric"], str(gate.get("name")))
    return lower


def _setup_warnings(a: RunStore, b: RunStore) -> list[str]:
    ra, rb = a.manifest.get("receipts", {}), b.manifest.get("receipts", {})
    warnings = []
    da, db = ra.get("dataset") or {}, rb.get("dataset") or {}
    if (da.get("name"), da.get("content_hash")) != (db.get("name"), db.get("content_hash")):
        warnings.append(
            f"the runs used different datasets ({da.get('name')} {str(da.get('content_hash'))[:12]} vs "
            f"{db.get('name')} {str(db.get('content_hash'))[:12]}); items are paired by id only"
        )
    if ra.get("evaluators") != rb.get("evaluators"):
        warnings.append("the runs used different evaluator versions: a difference may come from the evaluators")
    judge_a, judge_b = (ra.get("judge_model") or {}).get("model"), (rb.get("judge_model") or {}).get("model")
    if judge_a != judge_b:
        warnings.append(f"the runs were judged by different models ({judge_a} vs {judge_b})")
    return warnings


def compare_runs(
    store_a: RunStore,
    store_b: RunStore,
    *,
    margins: Mapping[str, float] | None = None,
    lower_is_better: Collection[str] = (),
    alpha: float = 0.05,
    resamples: int = 2000,
    seed: int = 0,
) -> RunComparison:
    """Return the paired comparison of run B (candidate) against run A (baseline) on every shared numeric score.

    `margins` (score → largest tolerated loss) turns that score's verdict into a non-inferiority
    test; `lower_is_better` names scores where smaller is better (added to those the runs' gates imply).
    Raise ScoregateError when the runs share no item or a margin names a score that is not compared.
    """
    values_a, types_a = _collect(store_a)
    values_b, types_b = _collect(store_b)
    shared = [item_id for item_id in values_a if item_id in values_b]
    side_a = _side(store_a, len(values_a), len(values_a) - len(shared))
    side_b = _side(store_b, len(values_b), len(values_b) - len(shared))
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
    unknown = sorted(set(margins) - set(names))
    if unknown:
        raise ScoregateError(
            f"--margin names score(s) not compared: {', '.join(unknown)}",
            hint=f"scores both runs have: {', '.join(names) or 'none'}",
        )
    lower = gate_directions([store_a.manifest, store_b.manifest])
    pairs: dict[str, tuple[list[float], list[float]]] = {}
    unmeasured: dict[str, int] = {}
    for name in names:
        xs, ys = [], []
        for item_id in shared:
            x, y = values_a[item_id].get(name), values_b[item_id].get(name)
            if x is not None and y is not None:
                xs.append(x)
                ys.append(y)
        pairs[name] = (xs, ys)
        unmeasured[name] = len(shared) - len(xs)
    directions = {name: name not in lower_is_better and name not in lower for name in names}
    stats = compare_many(
        pairs, margins=margins, higher_is_better=directions, alpha=alpha, resamples=resamples, seed=seed
    )
    scores = {}
    for name in names:
        if name in lower_is_better:
            source = "given by the caller"
        elif name in lower:
            source = f"gate {lower[name]} bounds it from above"
        else:
            source = "default"
        direction = "higher is better" if directions[name] else "lower is better"
        scores[name] = ScoreComparison(name, unmeasured[name], direction, source, stats[name])
    return RunComparison(
        a=side_a,
        b=side_b,
        shared_items=len(shared),
        alpha=alpha,
        scores=scores,
        skipped_scores=skipped,
        warnings=_setup_warnings(store_a, store_b),
        margins=margins,
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


@dataclass(frozen=True)
class CompareOptions:
    """What `scoregate compare` should do besides the statistics."""

    margins: dict[str, float] = field(default_factory=dict)
    lower_is_better: tuple[str, ...] = ()
    judge: bool = False
    judge_model: str | None = None
    judge_evaluator: str = "ev_preference_v1"
    use_cache: bool = True
    mirror_mlflow: bool = True
    eval_rows: bool = False


@dataclass
class CompareOutcome:
    """A comparison with what was added to it: the pairwise preference and the MLflow mirror."""

    comparison: RunComparison
    preference: PreferenceResult | None = None
    """B's win rate by the pairwise judge, when it was asked."""
    mlflow_run_id: str | None = None
    mlflow_warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form printed by `--json`."""
        return {
            **self.comparison.to_dict(),
            "preference": self.preference.to_dict() if self.preference is not None else None,
            "mlflow_run_id": self.mlflow_run_id,
            "mlflow_warnings": self.mlflow_warnings,
        }


def compare_stored_runs(root: Path, run_a: str, run_b: str, options: CompareOptions) -> CompareOutcome:
    """Compare two runs of the project at `root`; judge their outputs pairwise and mirror to MLflow when asked."""
    from scoregate.catalog.project import load_project

    project = load_project(root)
    runs = root / "runs"
    store_a, store_b = RunStore.open(runs, run_a), RunStore.open(runs, run_b)
    for store in (store_a, store_b):
        refuse_invalid(store, "compare")
    settings = project.config.settings
    comparison = compare_runs(
        store_a,
        store_b,
        margins=options.margins,
        lower_is_better=options.lower_is_better,
        alpha=1 - settings.confidence_level,
        resamples=settings.bootstrap_resamples,
        seed=settings.seed,
    )
    outcome = CompareOutcome(comparison)
    if options.judge:
        from scoregate.analysis.preference import judge_runs

        outcome.preference = judge_runs(
            project,
            store_a,
            store_b,
            evaluator=options.judge_evaluator,
            model=options.judge_model,
            use_cache=options.use_cache,
            confidence=settings.confidence_level,
        )
    if options.mirror_mlflow:
        from scoregate.sinks.mlflow_compare import log_evaluation_rows, mirror_comparison

        mirrored = mirror_comparison(outcome, store_a, store_b, project_root=root)
        outcome.mlflow_run_id, outcome.mlflow_warnings = mirrored.run_id, mirrored.warnings
        if options.eval_rows:
            for store in (store_a, store_b):
                try:
                    log_evaluation_rows(store, project_root=root)
                except Exception as exc:  # the comparison is mirrored; rows can be logged again later
                    outcome.mlflow_warnings.append(f"evaluation rows of {store.run_id} not logged: {exc}")
    return outcome
