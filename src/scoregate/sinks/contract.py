"""The one contract every tracker meets (`RunSink`): what a sink is told about a stored run, and what it says back.

A sink mirrors a stored run somewhere else (MLflow, Langfuse, ...). The run store is the system of record; a
sink only observes it. `scoregate.sinks.mirror_all` is the only caller of sinks: it builds them from the
registry (`scoregate.sinks.registry`), asks each one in turn, keeps one sink's failure from stopping another,
and hands the links each sink made to the others (the cross-link), so no sink imports another.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from scoregate.analysis.compare_runs import RunComparison
    from scoregate.catalog.project import Project
    from scoregate.store.record import Manifest, RunSummary
    from scoregate.store.run_store import RunStore


@dataclass(frozen=True)
class RunRecord:
    """A stored run's manifest and summary as the typed record, read once for every sink one mirror asks."""

    manifest: Manifest
    summary: RunSummary | None
    """None while the run has no summary (it did not finish)."""

    @classmethod
    def read(cls, store: RunStore) -> RunRecord:
        """Read the run's manifest and summary (a damaged file names the field)."""
        return cls(store.manifest_record, store.summary_record)


@dataclass
class SinkContext:
    """What every sink is built with: the project whose runs it mirrors, and how far a mirror goes."""

    project_root: Path
    loaded: Project | None = None
    """The project, when the caller has it loaded already (else `project()` loads it once)."""
    item_rows: bool = False
    """Also write each item as a row where the tracker has per-item rows (MLflow's evaluation rows)."""
    records: dict[Path, RunRecord] = field(default_factory=dict, repr=False)
    """The runs read during the current `mirror_all` call, by directory (it empties this when it starts)."""

    def record(self, store: RunStore) -> RunRecord:
        """The run's typed manifest and summary, read once per `mirror_all` call and shared by every sink."""
        found = self.records.get(store.directory)
        if found is None:
            found = self.records[store.directory] = RunRecord.read(store)
        return found

    def project(self) -> Project:
        """The project at `project_root`, loaded once."""
        if self.loaded is None:
            from scoregate.tracks.project import load_project

            self.loaded = load_project(self.project_root)
        return self.loaded


@dataclass
class SinkReport:
    """What one sink did for one call; `mirror_all` redacts every text in it before anyone sees it."""

    link: str | None = None
    """Where the run (or comparison) is in the tracker: MLflow's run id, Langfuse's experiment URL."""
    links: dict[str, str] = field(default_factory=dict)
    """Ids this sink made that the other sinks record beside their own copy (MLflow tags them on its run)."""
    lines: list[str] = field(default_factory=list)
    """What it did, one printed line each, each starting with the sink's name."""
    warnings: list[str] = field(default_factory=list)
    """What went wrong without failing the mirror (a compared run that could not be linked...)."""
    skipped: str | None = None
    """Why nothing was done (a printed line), when nothing was."""
    problem: str | None = None
    """What is left undone though the sink ran (items the server did not confirm...): one line."""
    error: BaseException | None = None
    """What a command aimed at this sink alone raises for `problem` (with its hint), instead of printing it."""
    created: bool = False
    """This call made the tracker's copy of the run (it was not there before); False: it updated one."""
    item_rows: int | None = None
    """How many per-item rows were written, when `SinkContext.item_rows` asked for them."""
    detail: Any = None
    """The sink's own report (Langfuse's `MirrorReport`), for callers that know the sink."""


@runtime_checkable
class RunSink(Protocol):
    """A tracker that mirrors stored runs. Build one with a factory taking a `SinkContext` (see the registry)."""

    name: str
    """The registry name: the run's final lines, `--json`'s `mirrors`/`mirror_errors` and `mirror_all(only=)` use it."""

    def configured(self) -> str | None:
        """Return why this sink is off (a missing key...), or None when it can mirror."""
        ...

    def mirror(self, store: RunStore) -> SinkReport:
        """Create or update the mirror of a finished run; the same run mirrored again updates, never duplicates."""
        ...

    def mark_invalid(self, store: RunStore, record: Mapping[str, Any]) -> SinkReport:
        """Carry the run's invalidation record to its mirror (or say, as `skipped`, why there is none)."""
        ...

    def forget(self, store: RunStore, item_ids: set[str]) -> None:
        """Treat these items as never mirrored: their newer records (`--retry-errors`) are sent again."""
        ...

    def link(self, store: RunStore, links: Mapping[str, str]) -> None:
        """Record the other sinks' ids of the same run on this sink's mirror (nothing when it has none)."""
        ...


@dataclass(frozen=True)
class Comparison:
    """A comparison of two stored runs, as a sink that mirrors comparisons receives it."""

    run_a: RunStore
    run_b: RunStore
    result: RunComparison
    record: dict[str, Any]
    """The comparison as `scoregate compare --json` prints it (with the pairwise preference, when judged)."""


@runtime_checkable
class ComparisonSink(Protocol):
    """A sink that also mirrors comparisons (MLflow): a sink without this method is not asked."""

    def mirror_comparison(self, comparison: Comparison) -> SinkReport:
        """Create or update the mirror of a comparison; link it to both runs' mirrors."""
        ...


@runtime_checkable
class ShardStreamingSink(Protocol):
    """A sink that mirrors a shard's items while the shard runs (Langfuse: traces and item scores into the run's
    one experiment); a sink without it mirrors only the merged run."""

    def mirror_shard(self, store: RunStore) -> SinkReport:
        """Send a shard's items (`store` is the shard's store under the run's id); no run-level record."""
        ...


@runtime_checkable
class ShardAdoptingSink(Protocol):
    """A sink that takes over, at merge, what the shards mirrored themselves, so nothing is sent twice."""

    def adopt_shards(self, store: RunStore, shards: Sequence[RunStore]) -> SinkReport:
        """Record in the merged run's mirror state what each shard's mirror (`shards`, their stores) confirmed."""
        ...


@runtime_checkable
class ResumableMirrorSink(Protocol):
    """A sink that can tell a mirror a kill cut short: a finished run resumed completes it (MLflow)."""

    def cut_short(self, store: RunStore) -> bool:
        """True when this sink's mirror of the finished run never completed (its id was never recorded)."""
        ...


@runtime_checkable
class ItemCountingSink(Protocol):
    """A sink that can check the server holds every item of the run (Langfuse: the experiment's item count)."""

    def missing_items(self, report: SinkReport) -> str | None:
        """What is missing on the server after the mirror that gave `report` (one line), or None."""
        ...


@runtime_checkable
class CheckedBeforeRunSink(Protocol):
    """A sink that checks, before a run's first model call, that it can take the run's mirror (Langfuse: a server
    too old for it is refused then, not after the run has spent its calls)."""

    def check_before_run(self) -> None:
        """Raise a ScoregateError when this sink's tracker cannot take the mirror; a tracker that does not answer
        now is not refused (the run is kept locally and a sync mirrors it later)."""
        ...


Ability = TypeVar("Ability")


def ability(sink: RunSink, kind: Callable[..., Ability]) -> Ability | None:
    """`sink` as the optional ability `kind` (a protocol above, or `ComparisonSink`), or None when it lacks it."""
    return sink if isinstance(sink, kind) else None  # type: ignore[arg-type,return-value]  # runtime_checkable
