"""How a run is asked for (RunOptions, which refuses options that contradict each other, and `check_run_flags` for
what `scoregate run` asks beyond one run's options) and what it left behind (RunOutcome); where the run store lives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.errors import ExitCode, ScoregateError, UsageError

if TYPE_CHECKING:
    from scoregate.catalog.project import Project
    from scoregate.sinks.mirror_all import MirrorOutcome
    from scoregate.store.record import RunSummary
    from scoregate.store.run_store import RunStore
    from scoregate.store.shards import Shard


@dataclass(frozen=True)
class RunOptions:
    """How to run an experiment (none of these change the answers, so none enter the cache key)."""

    limit: int | None = None
    concurrency: int | None = None
    model: str | None = None
    judge_model: str | None = None
    model_from: str = "--model"
    """Where `model` came from, for the error when it names no model: `--model`, or `SCOREGATE_MODEL` (make)."""
    use_cache: bool = True
    resume: str | None = None
    mirror_mlflow: bool = True
    mirror_langfuse: bool = True
    prompt_label: str | None = None
    prompt_version: int | None = None
    retry_errors: bool = False
    quarantine: bool = False
    prompt_source: str = "auto"
    """`langfuse`, `local` (the files in prompts/; `run --no-langfuse`), or `auto`: Langfuse when configured."""
    eval_rows: bool = False
    """Also write every item as an MLflow evaluation row (costs ~57 ms per item on sqlite; see bench/README.md)."""
    write_report: bool = True
    """Write `runs/<id>/report.html` at the end (about 0.3 ms per item; `scoregate report RUN` writes it later)."""
    repeat: int = 1
    budget_usd: float | None = None
    """Refuse to start above this forecast cost, stop at this spending (default: `settings.budget.usd`)."""
    budget_minutes: float | None = None
    """Refuse to start above this forecast wall time, stop at it (default: `settings.budget.minutes`)."""
    canary_on_change: bool = True
    """After a full run, re-score the calibration set of each pinned judge of it that changed since its last
    calibration or canary (`scoregate.app.run.judge_canary`); a canary's own runs set it False."""
    shard: Shard | None = None
    """Run only this shard's items, into `runs/<run_id>/shards/<I>-of-<N>/` (`scoregate.app.run.shards`)."""
    run_id: str | None = None
    """The new run's id (refused when it exists); None: `<experiment>-<time>-<4 hex>`. A sharded run's id is every
    shard's; None there: derived from the plan, dataset and `group`."""
    group: str | None = None
    stop_early: bool = False
    """Run the items in a seeded order and stop once the gate's question is settled (see `app.run.stop_early`)."""
    against: str | None = None
    """The reference run of a stop-early run."""
    max_items: int | None = None
    """Stop-early item cap: stop, inconclusive, after this many paired items."""
    max_cost: float | None = None
    """Stop-early cost cap (USD): stop, inconclusive, once the run has spent this much."""
    stop_batch: int | None = None
    """Items between two looks of a stop-early run (default `app.run.stop_early.DEFAULT_BATCH`)."""
    heartbeat_s: float = 30.0
    """Without a terminal, the most seconds between two lines while the run waits (the models' check, an item)."""

    def __post_init__(self) -> None:
        _check_combinations(self)

    @property
    def skipped_sinks(self) -> frozenset[str]:
        """The sinks this run must not mirror to (`--no-mlflow`, `--no-langfuse`)."""
        off = {"mlflow": not self.mirror_mlflow, "langfuse": not self.mirror_langfuse}
        return frozenset(name for name, skipped in off.items() if skipped)

    def recorded(self) -> dict[str, Any]:
        """The manifest's `options`: what a resume keeps (`StartOptions`). The rest holds for one invocation: the
        budget (a resume gets its own), stop-early (a resume runs the rest of the dataset), the heartbeat,
        --retry-errors and --quarantine; the prompts and models are kept by the receipts. A shard records no
        mirrors or report: it never mirrors to MLflow nor writes one (`scoregate merge` does, with its own flags)."""
        options: dict[str, Any] = {
            "limit": self.limit,
            "concurrency": self.concurrency,
            "cache": self.use_cache,
            "repeat": self.repeat,
        }
        if self.shard is None:
            options.update(mirrors_off=sorted(self.skipped_sinks), report=self.write_report, eval_rows=self.eval_rows)
        return options


SHARD_ONLY = "--shards and --group belong to a sharded run: add --shard I/N or auto"
SHARD_RESUMES = "--shard resumes by itself (run the same index again); drop --resume / --models"
STOP_EARLY_ONLY = "--against, --max-items, --max-cost and --stop-batch belong to --stop-early: add it"


def _check_combinations(options: RunOptions) -> None:
    """Refuse options that contradict each other, with the error `scoregate run` prints for its flags."""
    if options.shard is None and options.group is not None:
        raise UsageError(SHARD_ONLY)
    if options.run_id is not None and options.resume is not None:
        raise UsageError("--resume names the run to continue; drop --run-id", option="--run-id")
    if options.shard is not None and options.resume is not None:
        raise UsageError(SHARD_RESUMES)
    if (options.retry_errors or options.quarantine) and options.resume is None and options.shard is None:
        raise UsageError("--retry-errors and --quarantine work on a stored run: add --resume RUN_ID")
    for option, value in (("--budget-usd", options.budget_usd), ("--budget-minutes", options.budget_minutes)):
        if value is not None and not value > 0:
            raise UsageError(f"{value:g}: a budget must be more than 0 (0 allows no call)", option=option)
    stop_options = (options.against, options.max_items, options.max_cost, options.stop_batch)
    if not options.stop_early and any(value is not None for value in stop_options):
        raise UsageError(STOP_EARLY_ONLY)
    if options.stop_early:
        _check_stop_early_starts_one_run(options)


def _check_stop_early_starts_one_run(options: RunOptions) -> None:
    """Refuse `--stop-early` with `--resume` or `--shard`: it is one new run over the items in their order."""
    if options.resume is not None:
        raise ScoregateError(
            "--stop-early starts a new run; `--resume RUN` continues a run (a stopped one) to the full dataset",
            hint="drop --stop-early/--against to continue the run, or drop --resume to start a stop-early run",
        )
    if options.shard is not None:
        raise ScoregateError(
            "--stop-early runs the items in one seeded order, looking after each batch; it cannot be sharded",
            hint="drop --shard, or drop --stop-early to split the run across machines",
        )


def check_run_flags(
    *,
    shard: str | None = None,
    shards: int | None = None,
    models: list[str] | None = None,
    run_id: str | None = None,
    resume: str | None = None,
    dry_run: bool = False,
    no_langfuse: bool = False,
    prompt_source: str = "auto",
) -> None:
    """Refuse what `scoregate run` asks beyond one run's options when it contradicts itself (`--models`, `--dry-run`,
    `--shards`, `--no-langfuse`); raise UsageError. `RunOptions` checks the rest when it is built."""
    if shard is None and shards is not None:
        raise UsageError(SHARD_ONLY)
    if models is not None and run_id is not None:
        raise UsageError("--models starts one run per model, each with its own id; drop --run-id", option="--run-id")
    if shard is not None and models is not None:
        raise UsageError(SHARD_RESUMES)
    if no_langfuse and prompt_source == "langfuse":
        raise UsageError("--no-langfuse runs without Langfuse; drop it or --prompt-source langfuse")
    if dry_run and (resume is not None or models is not None):
        raise UsageError("--dry-run forecasts one new run: drop --resume/--models", option="--dry-run")


@dataclass
class RunOutcome:
    """What a finished run left behind."""

    run_id: str
    store: RunStore
    summary: dict[str, Any]
    mirrors: dict[str, str] = field(default_factory=dict)
    mirror_errors: dict[str, str] = field(default_factory=dict)
    mirror_fixes: dict[str, str] = field(default_factory=dict)
    """What fixes a failed mirror, by sink, when its error says (the hint of the error it would raise)."""
    mirror_refused: list[str] = field(default_factory=list)
    """Sinks whose tracker refused what the run sent (not an outage): the run exits `ExitCode.MIRROR_REFUSED`."""
    mirror_notes: list[str] = field(default_factory=list)
    nothing_to_do: str | None = None
    report: Path | None = None
    """`runs/<id>/report.html`, written at the end of the run (None when writing it failed)."""
    shard: str | None = None
    """`<I>-of-<N>` when this was one shard of a sharded run (no summary, gates or MLflow: `scoregate merge`)."""

    def add_mirrors(self, mirrored: MirrorOutcome) -> None:
        """Take in what the mirrors did: each sink's link, its lines (or why it was skipped), what went wrong."""
        for name, result in mirrored.results.items():
            report = result.report
            if report.link:
                self.mirrors[name] = report.link
            self.mirror_notes += [report.skipped] if report.skipped else report.lines
            if result.trouble:
                self.mirror_errors[name] = result.trouble
                error = report.error
                if isinstance(error, ScoregateError) and error.hint:
                    self.mirror_fixes[name] = error.hint
                if isinstance(error, ScoregateError) and error.exit_code == ExitCode.MIRROR_REFUSED:
                    self.mirror_refused.append(name)
        self.mirror_notes += mirrored.notes

    @cached_property
    def summary_record(self) -> RunSummary:
        """`summary` as the typed record (validated once)."""
        from scoregate.store.record import RunSummary

        return RunSummary.model_validate(self.summary)

    def _metric(self, name: str) -> int:
        return int(self.summary_record.run_metrics.value(name) or 0)

    @property
    def failed_items(self) -> int:
        """How many records of the run failed in their newest version (what `--retry-errors` runs again): of
        repeat 1 (the run's record), and with `--repeat K` of every repeat."""
        repeats = self.summary_record.section("repeats") or {}
        if "failed_records" in repeats:
            return int(repeats["failed_records"])
        return self._metric("error_count")

    @property
    def call_failed_scores(self) -> tuple[int, int]:
        """(null scores, items) of the items that have an output but a failed judge or stage call; `--retry-errors`
        redoes them. Runs summarised before this count existed read (0, 0)."""
        return self._metric("null_scores_in_items_with_failed_calls"), self._metric("items_with_failed_calls")

    @property
    def succeeded_items(self) -> int:
        """How many items of the run produced an output without error (in repeat 1, the run's record)."""
        return self._metric("items") - self._metric("error_count")

    @property
    def verdict(self) -> str:
        """`pass`, `fail`, `incomplete` or `no_gates`."""
        return str(self.summary_record.verdict)


def runs_dir(project: Project) -> Path:
    """Where the project's local run store lives."""
    return project.root / "runs"
