"""How a run is asked for (RunOptions, which refuses options that contradict each other, and `check_run_flags` for
what `scoregate run` asks beyond one run's options) and what it left behind (RunOutcome); where the run store lives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from scoregate.app.run import option_groups as groups
from scoregate.app.run.option_groups import PROMPT_SERVER, SHARD_ONLY
from scoregate.errors import ExitCode, ScoregateError, UsageError

if TYPE_CHECKING:
    from scoregate.catalog.project import Project
    from scoregate.sinks.mirror_all import MirrorOutcome
    from scoregate.store.record import RunSummary
    from scoregate.store.run_store import RunStore


@dataclass(frozen=True)
class RunOptions:
    """How to run an experiment, in groups that each check themselves (none of these change the answers, so none
    enter the cache key); building one refuses groups that contradict each other. The groups are also reached
    through the class (`RunOptions.Selection(limit=3)`), so a caller of the facade imports one name."""

    Selection: ClassVar[type[groups.Selection]] = groups.Selection
    Models: ClassVar[type[groups.Models]] = groups.Models
    ResumeFrom: ClassVar[type[groups.ResumeFrom]] = groups.ResumeFrom
    PromptSource: ClassVar[type[groups.PromptSource]] = groups.PromptSource
    Mirrors: ClassVar[type[groups.Mirrors]] = groups.Mirrors
    BudgetLimit: ClassVar[type[groups.BudgetLimit]] = groups.BudgetLimit
    ShardSpec: ClassVar[type[groups.ShardSpec]] = groups.ShardSpec
    StopEarly: ClassVar[type[groups.StopEarly]] = groups.StopEarly

    selection: groups.Selection = field(default_factory=groups.Selection)
    models: groups.Models = field(default_factory=groups.Models)
    resume: groups.ResumeFrom = field(default_factory=groups.ResumeFrom)
    prompts: groups.PromptSource = field(default_factory=groups.PromptSource)
    mirrors: groups.Mirrors = field(default_factory=groups.Mirrors)
    budget: groups.BudgetLimit = field(default_factory=groups.BudgetLimit)
    sharding: groups.ShardSpec = field(default_factory=groups.ShardSpec)
    stop_early: groups.StopEarly = field(default_factory=groups.StopEarly)
    concurrency: int | None = None
    use_cache: bool = True
    canary_on_change: bool = True
    """After a full run, re-score the calibration set of each pinned judge of it that changed since its last
    calibration or canary (`scoregate.app.run.judge_canary`); a canary's own runs set it False."""
    heartbeat_s: float = 30.0
    """Without a terminal, the most seconds between two lines while the run waits (the models' check, an item)."""

    def __post_init__(self) -> None:
        _check_combinations(self)

    def recorded(self) -> dict[str, Any]:
        """The manifest's `options`: what a resume keeps (`StartOptions`). The rest holds for one invocation: the
        budget (a resume gets its own), stop-early (a resume runs the rest of the dataset), the heartbeat,
        --retry-errors and --quarantine; the prompts and models are kept by the receipts. A shard records no
        mirrors or report: it never mirrors to MLflow nor writes one (`scoregate merge` does, with its own flags)."""
        options: dict[str, Any] = {
            "limit": self.selection.limit,
            "concurrency": self.concurrency,
            "cache": self.use_cache,
            "repeat": self.selection.repeat,
        }
        if self.sharding.shard is None:
            options.update(
                mirrors_off=sorted(self.mirrors.off), report=self.mirrors.report, eval_rows=self.mirrors.eval_rows
            )
        return options


SHARD_RESUMES = "--shard resumes by itself (run the same index again); drop --resume / --models"


def _check_combinations(options: RunOptions) -> None:
    """Refuse groups that contradict each other, with the error `scoregate run` prints for their flags."""
    resume, shard = options.resume, options.sharding.shard
    if options.selection.run_id is not None and resume.run_id is not None:
        raise UsageError("--resume names the run to continue; drop --run-id", option="--run-id")
    if shard is not None and resume.run_id is not None:
        raise UsageError(SHARD_RESUMES)
    if (resume.retry_errors or resume.quarantine) and resume.run_id is None and shard is None:
        raise UsageError("--retry-errors and --quarantine work on a stored run: add --resume RUN_ID")
    if options.stop_early.on:
        _check_stop_early_starts_one_run(options)


def _check_stop_early_starts_one_run(options: RunOptions) -> None:
    """Refuse `--stop-early` with `--resume` or `--shard`: it is one new run over the items in their order."""
    if options.resume.run_id is not None:
        raise ScoregateError(
            "--stop-early starts a new run; `--resume RUN` continues a run (a stopped one) to the full dataset",
            hint="drop --stop-early/--against to continue the run, or drop --resume to start a stop-early run",
        )
    if options.sharding.shard is not None:
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
    if no_langfuse and prompt_source == PROMPT_SERVER:
        raise UsageError(f"--no-langfuse runs without Langfuse; drop it or --prompt-source {PROMPT_SERVER}")
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
    mirror_redo: dict[str, str] = field(default_factory=dict)
    """The command that mirrors the run again, by failed sink (`scoregate mlflow-sync RUN`, `scoregate sync RUN --to
    NAME`)."""
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
                if result.resync:
                    self.mirror_redo[name] = result.resync.format(run_id=self.run_id)
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

    @property
    def run_name(self) -> str:
        """The run's name (`model · prompt@version`), from its manifest's receipts."""
        from scoregate.store.identity import manifest_run_name

        return manifest_run_name(self.store.manifest_record)

    def _metric(self, name: str) -> int:
        return int(self.summary_record.run_metrics.value(name) or 0)

    @property
    def failed_items(self) -> int:
        """How many records of the run failed in their newest version (what `--retry-errors` runs again): of
        repeat 1 (the run's record), and with `--repeat K` of every repeat."""
        repeats = self.summary_record.repeats
        if repeats is not None and repeats.failed_records is not None:
            return repeats.failed_records
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
