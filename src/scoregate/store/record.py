"""The run record as types: `manifest.json` (a `Manifest` holding the `Receipts`) and `summary.json` (a `RunSummary`
holding `ScoreStats` and `GateResult`s); the blocks a feature adds (shard, merge, stop-early, flaky, slices) are
`store/sections.py`, the base every part shares is `store/record_base.py`.

Each type reads every file a released scoregate wrote: a key it does not name is kept as it was, a key it names is
written back only if the file had it, so `to_dict(from_dict(x)) == x` for old runs as for new ones. A file written
before `schema_version` existed reads as version 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, create_model

from scoregate.store.record_base import Number, Record
from scoregate.store.sections import (
    CascadeJudgeRecord,
    CorrectedStats,
    FlakySection,
    IncompleteBlock,
    MergeBlock,
    RepeatsSection,
    ShardBlock,
    SliceRow,
    StopEarlyRecord,
    StopEarlySection,
)
from scoregate.store.vocabulary import RUN_METRICS, Direction

SCHEMA_VERSION = 2
"""2: the files carry `schema_version`. 1: every file written before (read the same way)."""

GateStatus = Literal["pass", "fail", "incomplete"]


class DatasetReceipt(Record):
    """The dataset a run read: its name, content hash and item count."""

    name: str
    content_hash: str | None = None
    items: int | None = None


class PromptReceipt(Record):
    """One prompt as a run used it: version, where it came from, fingerprint, labels and call settings."""

    version: str | int | None = None
    source: str | None = None
    langfuse_version: int | None = None
    fingerprint: str | None = None
    labels: list[str] = Field(default_factory=list)
    temperature: Number | None = None
    max_tokens: int | None = None


class ModelReceipt(Record):
    """A model as a run called it: the yaml name, provider, provider's model id, endpoint and settings."""

    name: str | None = None
    provider: str | None = None
    model: str | None = None
    endpoint: str | None = None
    temperature: Number | None = None
    max_tokens: int | None = None


class GitReceipt(Record):
    """The commit the project was at when the run started, and whether its work tree had changes (None outside git)."""

    commit: str | None = None
    dirty: bool | None = None


class EvaluatorReceipt(Record):
    """One evaluator as a run scored with it: its kind, version and the hash of its file."""

    kind: str | None = None
    version: int | str | None = None
    file_hash: str | None = None


class Receipts(Record):
    """What a run was made of: tool version, commit, config hash, dataset, prompts, models, evaluators, gates."""

    tool_version: str | None = None
    git: GitReceipt | None = None
    config_hash: str | None = None
    config_parts: dict[str, Any] | None = None
    project: str | None = None
    experiment: str | None = None
    dataset: DatasetReceipt | None = None
    prompts: dict[str, PromptReceipt] = Field(default_factory=dict)
    output_from: str | None = None
    model: ModelReceipt | None = None
    judge_model: ModelReceipt | None = None
    evaluators: dict[str, EvaluatorReceipt] = Field(default_factory=dict)
    composites: dict[str, Any] | None = None
    gates: list[Any] | dict[str, Any] | None = None
    gates_hash: str | None = None
    pipeline_mode: str | None = None
    """For a pipeline: `fixture` or `live`, its `stage_inputs` (`scoregate.engine.stages.stages_receipt`)."""
    stages: dict[str, dict[str, Any]] | None = None
    """For a pipeline: each stage's `prompt` (name@version), `model` and `evaluators`, in pipeline order."""

    def dataset_name(self) -> str:
        """The name of the dataset the run read (every run's receipts name it)."""
        if self.dataset is None:
            raise KeyError("name")
        return self.dataset.name

    def git_commit(self) -> str | None:
        """The commit the run started at, or None outside git."""
        return self.git.commit if self.git else None

    def evaluator_hashes(self) -> dict[str, str | None]:
        """Each evaluator's name and the hash of its file as the run used it."""
        return {name: info.file_hash for name, info in self.evaluators.items()}

    def prompt_versions(self) -> dict[str, Any]:
        """Each prompt's name and the version the run used."""
        return {name: info.version for name, info in self.prompts.items()}


class StartOptions(Record):
    """The options a run was started with (`scoregate run --limit/--concurrency/--no-cache/--repeat`, and since
    `mirrors_off` the run's mirrors, report and evaluation rows); a resume keeps them."""

    limit: int | None = None
    concurrency: int | None = None
    cache: bool | None = None
    repeat: int = 1
    mirrors_off: list[str] | None = None
    """The sinks the run was started without (`mlflow` for --no-mlflow, `langfuse` for --no-langfuse); None: a run
    from before this was recorded (a resume then mirrors as its own flags say)."""
    report: bool | None = None
    """Whether the run writes `runs/<id>/report.html` (False: --no-report); None: not recorded."""
    eval_rows: bool | None = None
    """Whether the run writes each item as an MLflow evaluation row (--eval-rows); None: not recorded."""


class Manifest(Record):
    """`manifest.json`: the run's id, status, times, options and receipts."""

    schema_version: int = 1
    run_id: str
    status: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    options: StartOptions = StartOptions()
    receipts: Receipts
    pid: int | None = None
    model_checks: list[Any] | dict[str, Any] | None = None
    resumed_at: str | None = None
    failure: str | None = None
    stopped_because: str | None = None
    stop_early: StopEarlyRecord | None = None
    """The sequential test's record when the run was started with `--stop-early` (`scoregate.app.run.stop_early`)."""
    shard: ShardBlock | None = None
    """For one shard of a run: its index, count, the whole run's id and group (`scoregate.app.run.shards`)."""
    merge: MergeBlock | None = None
    """For a merged run: the shards it was made of and their digest (`scoregate.app.merge`)."""
    merged_at: str | None = None
    revision: int | None = None


class ScoreStats(Record):
    """One score's statistics in a run: counts, coverage, and for numbers the mean, spread and its CI."""

    n_total: int = 0
    n_measured: int = 0
    coverage: Number | None = None
    mean: Number | None = None
    median: Number | None = None
    std: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    min: Number | None = None
    max: Number | None = None
    confidence: Number | None = None
    ci_method: str | None = None
    data_type: str | None = None
    categories: dict[str, int] | None = None
    null_reasons: dict[str, int] = Field(default_factory=dict)
    value: Number | str | None = None
    reason: str | None = None
    samples_measured: int | None = None
    samples_skipped: int | None = None
    corrected: CorrectedStats | None = None
    """A judge score's bias-corrected mean beside the raw one, when its judge has a calibration set."""


class GateResult(Record):
    """One gate's verdict in a run, with the evidence behind it."""

    name: str
    metric: str | None = None
    stat: str | None = None
    op: str | None = None
    threshold: Number | None = None
    observed: Number | None = None
    coverage: Number | None = None
    status: GateStatus | str
    detail: str | None = None
    failing_items: list[str] | None = None
    """For an `every_item` gate: the ids of the items that broke it (all of them, in dataset order)."""
    quarantined: list[str] | None = None
    """For an `every_item` gate: the flaky items kept out of it (`app.run.flaky_items`), counted unmeasured."""
    slices: list[SliceRow] | None = None
    """For a slice gate: one row per slice (`scoregate.analysis.slices.SliceResult.to_dict`)."""
    quarantined_breaking: list[str] | None = None
    """Of `quarantined`: the items whose value in this run broke the rule (the verdict rests on leaving them out)."""
    gated_items: int | None = None
    """With `quarantined`: the items whose values decided the gate (measured and not kept out)."""
    total_items: int | None = None
    """With `quarantined`: the run's items."""
    estimate: str | None = None
    """`corrected` for a gate judged on the bias-corrected estimate (`analysis.corrected_gates`)."""

    def verdict_words(self, *, upper: bool = False) -> str:
        """The status as every view says it: `pass`, or `pass on 4 of 9, 5 quarantined` when flaky items were kept
        out (never a plain pass then); `upper`: the status in capitals (`PASS on 4 of 9, …`)."""
        status = str(self.status).upper() if upper else str(self.status)
        if not self.quarantined:
            return status
        kept = f"{len(self.quarantined)} quarantined"
        if self.gated_items is None or self.total_items is None:  # a run summarised before the counts were kept
            return f"{status}, {kept}"
        return f"{status} on {self.gated_items} of {self.total_items}, {kept}"


class RunMetricsRecord(Record):
    """summary.json `run_metrics`: a field per run metric of `RUN_METRICS` (None when the file lacks it), other
    keys kept as written, and written back in the file's order."""

    def value(self, key: str) -> Number | None:
        """A run metric's number (a key the table does not name too), or None when the run has none."""
        found = getattr(self, key) if key in type(self).model_fields else (self.model_extra or {}).get(key)
        return found if isinstance(found, int | float) and not isinstance(found, bool) else None

    def __getitem__(self, key: str) -> Any:
        """The value summary.json wrote for `key` (any JSON value); KeyError when it wrote none, as a dict would."""
        if not self.has(key):
            raise KeyError(key)
        return getattr(self, key) if key in type(self).model_fields else (self.model_extra or {})[key]

    def has(self, key: str) -> bool:
        """Whether summary.json wrote `key` (null or not): a run summarised before a metric existed lacks it."""
        return key in self.model_fields_set or key in (self.model_extra or {})

    @classmethod
    def direction(cls, key: str) -> Direction:
        """Which way the metric `key` (a field) improves, as `RUN_METRICS` says."""
        extra = cls.model_fields[key].json_schema_extra
        assert isinstance(extra, dict)
        return extra["direction"]  # type: ignore[return-value]


if TYPE_CHECKING:
    RunMetrics = RunMetricsRecord
else:
    RunMetrics = create_model(
        "RunMetrics",
        __base__=RunMetricsRecord,
        __module__=__name__,
        **{
            m.key: (Number | None, Field(default=None, json_schema_extra={"direction": m.direction}))
            for m in RUN_METRICS
            if m.in_summary
        },
    )
    RunMetrics.__doc__ = RunMetricsRecord.__doc__


class RunSummary(Record):
    """`summary.json`: per-score statistics, run metrics, coverage, gates and the verdict (tracks add blocks)."""

    schema_version: int = 1
    run_id: str
    experiment: str | None = None
    dataset: str | None = None
    prompts: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None
    scores: dict[str, ScoreStats] = Field(default_factory=dict)
    run_metrics: RunMetrics = RunMetrics()
    coverage: dict[str, Any] = Field(default_factory=dict)
    gates: list[GateResult] = Field(default_factory=list)
    verdict: str | None = None
    stop_early: StopEarlySection | None = None
    """Where a stop-early run stopped and what it found; None for an ordinary run or one continued to the end."""
    flaky: FlakySection | None = None
    """The flaky items of the experiment, kept out of its `every_item` gates."""
    incomplete: IncompleteBlock | None = None
    """For a merged run with holes: what is missing (every gate is then INCOMPLETE)."""
    shard: ShardBlock | None = None
    """For one shard's own summary: which shard."""
    repeats: RepeatsSection | None = None
    """For a `run --repeat K` run: how consistent its repeats were."""
    cascade: dict[str, CascadeJudgeRecord] | None = None
    """Per cascade judge: its guarantee, the share its first judge kept, the cost saved (`app.run.cascade_report`)."""
    valid: bool | None = None
    """False once the run was invalidated (`scoregate runs invalidate`); None: never marked."""
    invalid_reason: str | None = None
    invalidated_at: str | None = None
    superseded_by: str | None = None
    """The run to use instead of an invalidated one, when one was named."""

    def score(self, key: str) -> ScoreStats | None:
        """One score's statistics, or None when the run has no such score."""
        return self.scores.get(key)

    def quarantine_note(self) -> str | None:
        """`g1: pass on 5 of 6, 1 quarantined; …` for the gates judged with flaky items kept out, else None."""
        kept = [f"{g.name}: {g.verdict_words()}" for g in self.gates if g.quarantined]
        return "; ".join(kept) or None

    def section(self, name: str) -> Any:
        """A block of summary.json as plain data, as the file holds it (`stages`, an unknown track's...), or None.

        A block with a field here reads better through it (`summary.repeats.k`); a known track's block reads through
        the track's model: `scoregate.tracks.registry.track_section`."""
        if name not in type(self).model_fields:
            return (self.model_extra or {}).get(name)
        if name not in self.model_fields_set:
            return None
        value = getattr(self, name)
        return value.to_dict() if isinstance(value, Record) else value
