"""Compare two stored runs and mirror the comparison: the orchestration around `analysis.compare_runs`.

The numbers are computed first (`scoregate.analysis.compare_runs`, no model and no sink), then, when
asked, the pairwise judge (`scoregate.app.pairwise`) calls a model, and `scoregate.sinks.mirror_all` hands the
outcome to the sinks that mirror comparisons (a `ComparisonSink`) — as `scoregate.app.run.run_execution` does for runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.analysis.compare_runs import RunComparison, compare_runs
from scoregate.errors import UsageError
from scoregate.store.invalidation import refuse_invalid
from scoregate.store.run_store import RunStore

if TYPE_CHECKING:
    from scoregate.analysis.compare_runs import RunSide as RunSide  # the CLI names a comparison's parts by type
    from scoregate.analysis.compare_runs import ScoreComparison as ScoreComparison
    from scoregate.catalog.project import Project
    from scoregate.scoring.preference import PreferenceResult


@dataclass(frozen=True)
class CompareOptions:
    """What `scoregate compare` should do besides the statistics."""

    metrics: tuple[str, ...] = ()
    margins: dict[str, float] = field(default_factory=dict)
    lower_is_better: tuple[str, ...] = ()
    judge: bool = False
    judge_model: str | None = None
    judge_evaluator: str = "ev_preference_v1"
    use_cache: bool = True
    no_mirror: frozenset[str] = frozenset()
    """The sinks not to mirror the comparison to (`--no-mirror NAME`; an unknown name is refused)."""
    eval_rows: bool = False
    estimate: str | None = None
    """`raw`, or `corrected`: each judge score's corrected paired difference beside the raw one (None: the project's
    `settings.gate_estimate`)."""
    margin_texts: InitVar[Sequence[str]] = ()
    """`--margin SCORE=VALUE` as typed: parsed into `margins` (a malformed one is refused)."""

    def __post_init__(self, margin_texts: Sequence[str]) -> None:
        from scoregate.analysis.compare_runs import parse_margins
        from scoregate.app.mirror_sync import sink_choice

        if margin_texts:
            object.__setattr__(self, "margins", {**self.margins, **parse_margins(margin_texts)})
        sink_choice(self.no_mirror, "--no-mirror")
        if self.estimate not in (None, "raw", "corrected"):
            raise UsageError(f"--estimate {self.estimate} is not raw or corrected", option="--estimate")


@dataclass
class ComparisonMirror:
    """What one sink that mirrors comparisons made of this one."""

    link: str | None = None
    """Where the comparison is in the tracker (MLflow's run id), when it was mirrored."""
    lines: list[str] = field(default_factory=list)
    """What it did, one printed line each (each starts with the sink's name)."""
    warnings: list[str] = field(default_factory=list)
    """What could not be mirrored, one line each."""


@dataclass
class CompareOutcome:
    """A comparison with what was added to it: the pairwise preference and its mirrors."""

    comparison: RunComparison
    preference: PreferenceResult | None = None
    """B's win rate by the pairwise judge, when it was asked."""
    mirrors: dict[str, ComparisonMirror] = field(default_factory=dict)
    """Sink name → its mirror of the comparison, for each sink that mirrors comparisons and was asked."""
    estimate: str = "raw"
    """`corrected` when each judge score's corrected paired difference was asked (`corrected`)."""
    corrected: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Judge score → its corrected paired difference (B − A) with interval and verdict, or null with the reason."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form printed by `--json`: `<sink>_run_id` and `<sink>_warnings` per mirror, and
        with the corrected estimate, `scores.<key>.corrected` of each judge score."""
        mirrored: dict[str, Any] = {}
        for name, mirror in self.mirrors.items():
            mirrored |= {f"{name}_run_id": mirror.link, f"{name}_warnings": mirror.warnings}
        plain = self.comparison.to_dict()
        for key, block in self.corrected.items():
            plain["scores"][key]["corrected"] = block
        return {
            **plain,
            "estimate": self.estimate,
            "preference": self.preference.to_dict() if self.preference is not None else None,
            **mirrored,
        }


def compare_stored_runs(
    root: Path,
    run_a: str,
    run_b: str,
    options: CompareOptions,
    *,
    before_mirror: Callable[[CompareOutcome], None] | None = None,
) -> CompareOutcome:
    """Compare two runs of the project at `root`; judge their outputs pairwise and mirror to MLflow when asked.

    `before_mirror(outcome)` runs once the comparison is complete and before MLflow is imported (~150 MB):
    what it holds in between is freed before the mirror's modules are loaded.
    """
    from scoregate.tracks.project import load_project

    project = load_project(root)
    runs = root / "runs"
    store_a, store_b = RunStore.open(runs, run_a), RunStore.open(runs, run_b)
    for store in (store_a, store_b):
        refuse_invalid(store, "compare")
    settings = project.config.settings
    from scoregate.catalog.directions import project_directions

    comparison = compare_runs(
        store_a,
        store_b,
        metrics=options.metrics,
        margins=options.margins,
        directions=project_directions(project),
        lower_is_better=options.lower_is_better,
        alpha=1 - settings.confidence_level,
        resamples=settings.bootstrap_resamples,
        seed=settings.seed,
    )
    outcome = CompareOutcome(comparison, estimate=options.estimate or settings.gate_estimate)
    if outcome.estimate == "corrected":
        from scoregate.app.corrected_comparison import corrected_differences

        outcome.corrected = corrected_differences(project, store_a, store_b, comparison)
    if options.judge:
        from scoregate.app.pairwise import judge_runs

        outcome.preference = judge_runs(
            project,
            store_a,
            store_b,
            evaluator=options.judge_evaluator,
            model=options.judge_model,
            use_cache=options.use_cache,
            confidence=settings.confidence_level,
        )
    if before_mirror is not None:
        before_mirror(outcome)
    _mirror(outcome, store_a, store_b, project, options)
    return outcome


def _mirror(
    outcome: CompareOutcome, store_a: RunStore, store_b: RunStore, project: Project, options: CompareOptions
) -> None:
    """Mirror the comparison to the sinks that mirror comparisons (but those in `--no-mirror`); a failure there
    is a warning: the comparison is computed and printed all the same."""
    from scoregate.sinks.contract import Comparison, SinkContext  # mlflow imports slowly: only when used
    from scoregate.sinks.mirror_all import MirrorComparison, mirror_all

    compared = Comparison(store_a, store_b, outcome.comparison, outcome.to_dict())
    context = SinkContext(project.root, loaded=project, item_rows=options.eval_rows)
    mirrored = mirror_all(MirrorComparison(compared), context, skip=options.no_mirror)
    for name, result in mirrored.results.items():
        report = result.report
        mirror = outcome.mirrors[name] = ComparisonMirror(report.link, list(report.lines), list(report.warnings))
        if report.skipped:
            mirror.lines.append(report.skipped)
        if result.error:
            mirror.warnings.append(f"comparison not mirrored: {result.error}")
