"""The groups a run's options come in (`RunOptions` holds one of each): each is frozen and refuses, when it is
built, what contradicts itself; `RunOptions` checks what spans two groups."""

from __future__ import annotations

from dataclasses import dataclass, field

from scoregate.errors import UsageError
from scoregate.store.shards import Shard

SHARD_ONLY = "--shards and --group belong to a sharded run: add --shard I/N or auto"
STOP_EARLY_ONLY = "--against, --max-items, --max-cost and --stop-batch belong to --stop-early: add it"
MIRROR_ALIASES = {"--no-mlflow": "mlflow", "--no-langfuse": "langfuse"}
"""The switches `scoregate run` kept from before `--no-mirror NAME`: each is `--no-mirror` of one sink."""
PROMPT_SERVER = MIRROR_ALIASES["--no-langfuse"]
"""The prompt source that is also a mirror: with its mirror off, `--prompt-source auto` reads the local files."""


@dataclass(frozen=True)
class Selection:
    """Which items, how often, under which id."""

    limit: int | None = None
    """Run only the first N items."""
    repeat: int = 1
    """Run each item K times (repeats 2..K bypass the cache)."""
    run_id: str | None = None
    """The new run's id (refused when it exists); None: `<experiment>-<time>-<4 hex>`. A sharded run's id is every
    shard's; None there: derived from the plan, dataset and the shard's `group`."""


@dataclass(frozen=True)
class Models:
    """The models the run uses instead of the experiment's own."""

    model: str | None = None
    judge_model: str | None = None
    model_from: str = "--model"
    """Where `model` came from, for the error when it names no model: `--model`, or `SCOREGATE_MODEL` (make)."""


@dataclass(frozen=True)
class ResumeFrom:
    """The stored run to continue, and what to redo in it."""

    run_id: str | None = None
    retry_errors: bool = False
    quarantine: bool = False
    """Move damaged lines of results.jsonl aside (kept) and redo their items."""


@dataclass(frozen=True)
class PromptSource:
    """Where the prompts come from: `langfuse`, `local` (the files in prompts/) or `auto` (Langfuse when set)."""

    source: str = "auto"
    label: str | None = None
    version: int | None = None


@dataclass(frozen=True)
class Mirrors:
    """What the run leaves outside its store: the sinks it skips, MLflow evaluation rows, the HTML report."""

    off: frozenset[str] = field(default_factory=frozenset)
    """Registered sinks (`scoregate.sinks.registry`) this run does not mirror to; an unknown name is refused."""
    eval_rows: bool = False
    """Also write every item as an MLflow evaluation row (costs ~57 ms per item on sqlite; see bench/README.md)."""
    report: bool = True
    """Write `runs/<id>/report.html` at the end (about 0.3 ms per item; `scoregate report RUN` writes it later)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "off", frozenset(self.off))
        if self.off - set(MIRROR_ALIASES.values()):  # a run that starts loads no sink before its models' check
            from scoregate.sinks.registry import sink_names

            known = sink_names()
            unknown = sorted(self.off - set(known))
            if unknown:
                raise UsageError(
                    f"no sink {', '.join(map(repr, unknown))}; the sinks are: {', '.join(known)}",
                    option="--no-mirror",
                )


@dataclass(frozen=True)
class BudgetLimit:
    """Refuse to start above these forecasts, stop at them (None: `settings.budget`)."""

    usd: float | None = None
    minutes: float | None = None

    def __post_init__(self) -> None:
        for option, value in (("--budget-usd", self.usd), ("--budget-minutes", self.minutes)):
            if value is not None and not value > 0:
                raise UsageError(f"{value:g}: a budget must be more than 0 (0 allows no call)", option=option)


@dataclass(frozen=True)
class ShardSpec:
    """Run only one shard's items, into `runs/<run_id>/shards/<I>-of-<N>/` (`scoregate.app.run.shards`)."""

    shard: Shard | None = None
    group: str | None = None
    """A name that sets one sharded run apart (e.g. the CI run id); it enters the derived run id."""

    def __post_init__(self) -> None:
        if self.shard is None and self.group is not None:
            raise UsageError(SHARD_ONLY)


@dataclass(frozen=True)
class StopEarly:
    """Run the items in a seeded order and stop once the gate's question is settled (`app.run.stop_early`)."""

    on: bool = False
    against: str | None = None
    """The reference run."""
    max_items: int | None = None
    """Stop, inconclusive, after this many paired items."""
    max_cost: float | None = None
    """Stop, inconclusive, once the run has spent this much (USD)."""
    batch: int | None = None
    """Items between two looks (default `app.run.stop_early.DEFAULT_BATCH`)."""

    def __post_init__(self) -> None:
        caps = (self.against, self.max_items, self.max_cost, self.batch)
        if not self.on and any(value is not None for value in caps):
            raise UsageError(STOP_EARLY_ONLY)
