"""`mirror_all`: the only caller of sinks. Every command that mirrors (run, resume, invalidate, compare, merge,
`sync`) asks it, with the action and, where a command targets some sinks, `only`.

An action that needs an optional ability (`scoregate.sinks.contract`: streaming a shard's items, adopting shards,
finishing a mirror a kill cut short, counting the server's items) is asked of every sink that has it, and the
others do not take part: the app never names a tracker.

Each sink is asked on its own: one that raises is reported (its error redacted) and never stops the others or
the command. After a mirror, the links each sink made are handed to the other sinks (MLflow tags its run with
the Langfuse experiment URL), so no sink imports another.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scoregate.sinks.contract import (
    CheckedBeforeRunSink,
    Comparison,
    ComparisonSink,
    ItemCountingSink,
    ResumableMirrorSink,
    RunSink,
    ShardAdoptingSink,
    ShardStreamingSink,
    SinkContext,
    SinkReport,
    ability,
)
from scoregate.sinks.registry import build_sink, sink_names
from scoregate.support.redaction import redact

if TYPE_CHECKING:
    from scoregate.store.run_store import RunStore


@dataclass(frozen=True)
class Mirror:
    """Create or update every mirror of a finished run."""

    store: RunStore
    count_items: bool = False
    """Then check, on the sinks that can count them, that the server holds every item of the run (a merge)."""


@dataclass(frozen=True)
class MirrorShard:
    """Send a shard's items, on the sinks that stream shards (the others mirror only the merged run)."""

    store: RunStore


@dataclass(frozen=True)
class AdoptShards:
    """Before a merged run's mirror: take over what its shards mirrored, on the sinks that adopt shards."""

    store: RunStore
    shards: tuple[RunStore, ...]


@dataclass(frozen=True)
class FinishMirror:
    """Complete the mirrors of a finished run that a kill cut short, on the sinks that can tell."""

    store: RunStore


@dataclass(frozen=True)
class MarkInvalid:
    """Carry a run's invalidation record to its mirrors."""

    store: RunStore
    record: Mapping[str, Any]


@dataclass(frozen=True)
class Forget:
    """Treat some items of a run as never mirrored (their newer records are sent by the next mirror)."""

    store: RunStore
    item_ids: frozenset[str]


@dataclass(frozen=True)
class MirrorComparison:
    """Mirror a comparison of two runs, on the sinks that mirror comparisons."""

    comparison: Comparison


Action = Mirror | MarkInvalid | Forget | MirrorComparison | MirrorShard | AdoptShards | FinishMirror


@dataclass
class SinkResult:
    """One sink's answer: its report, or the (redacted) error it raised."""

    name: str
    title: str = ""
    """How a sentence names the sink (its `title`, e.g. "MLflow"; else its registry name)."""
    resync: str = ""
    """The command that mirrors a run to this sink again, with `{run_id}` to fill (the sink's `resync_command`,
    e.g. `scoregate mlflow-sync {run_id}`; else `scoregate sync {run_id} --to NAME`)."""
    report: SinkReport = field(default_factory=SinkReport)
    error: str | None = None
    """`Type: message` of what the sink raised, redacted."""
    failure: BaseException | None = field(default=None, repr=False)
    """What it raised, for a command aimed at this sink alone (`MirrorOutcome.raise_for`)."""

    @property
    def trouble(self) -> str | None:
        """What went wrong, one line: the error it raised, or the problem it reported."""
        return self.error or self.report.problem


@dataclass
class MirrorOutcome:
    """What `mirror_all` did, sink by sink (in mirror order), and how the cross-links went."""

    results: dict[str, SinkResult] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """A cross-link that could not be made, one line each."""

    def links(self) -> dict[str, str]:
        """Sink name → where the run is in that tracker, for the sinks that said."""
        return {n: r.report.link for n, r in self.results.items() if r.report.link}

    def troubles(self) -> dict[str, str]:
        """Sink name → what went wrong there, for the sinks where something did."""
        return {n: r.trouble for n, r in self.results.items() if r.trouble}

    def raise_for(self, name: str) -> None:
        """Raise what went wrong at sink `name` (what it raised, or its problem's error); nothing when all went well."""
        result = self.results.get(name)
        if result is None:
            return
        if result.failure is not None:
            raise result.failure
        if result.report.error is not None:
            raise result.report.error


def mirror_all(
    action: Action, context: SinkContext, *, only: str | Collection[str] | None = None, skip: Collection[str] = ()
) -> MirrorOutcome:
    """Ask every registered sink (or those `only` names), except those in `skip`, to do `action`; never raises
    for a sink. A sink that is off (`configured()`) is skipped before a mirror, unless `only` names it: the
    command targets it, so it is asked and its own error says what is missing."""
    named = None if only is None else {only} if isinstance(only, str) else set(only)
    unknown = sorted((named or set()) - set(sink_names()))
    if unknown:
        raise ValueError(f"no sink {unknown[0]!r}; the sinks are {', '.join(sink_names())}")
    outcome = MirrorOutcome()
    context.records.clear()  # a context used again reads the run's files again: they may have changed since
    built: dict[str, RunSink] = {}
    for name in sink_names():
        if name in skip or (named is not None and name not in named):
            continue
        result = _ask(name, action, context, built, explicit=named is not None)
        if result is not None:
            outcome.results[name] = result
    if isinstance(action, Mirror | MarkInvalid | FinishMirror):
        _cross_link(action.store, context, outcome, built, skip)
    return outcome


def check_sinks_before_run(context: SinkContext, *, skip: Collection[str] = ()) -> None:
    """Before a run's first model call: let every sink that is on (and not in `skip`) and checks its tracker
    refuse the run (a ScoregateError raised here stops the run before it spends anything)."""
    for name in sink_names():
        if name in skip:
            continue
        try:
            sink = build_sink(name, context)
            checks = ability(sink, CheckedBeforeRunSink) if sink.configured() is None else None
        except Exception:  # a sink that cannot be built says so when it mirrors; it does not stop the run here
            continue
        if checks is not None:
            checks.check_before_run()


def cut_short(store: RunStore, context: SinkContext, *, skip: Collection[str] = ()) -> list[str]:
    """The sinks (not in `skip`, and on) whose mirror of finished run `store` a kill cut short; a sink that cannot
    tell, or fails to, is not named (the next mirror redoes it anyway)."""
    names = []
    for name in sink_names():
        if name in skip:
            continue
        try:
            sink = build_sink(name, context)
            resumes = ability(sink, ResumableMirrorSink)
            if resumes is not None and sink.configured() is None and resumes.cut_short(store):
                names.append(name)
        except Exception:  # asking is a courtesy: a failing sink says so when it mirrors
            continue
    return names


def _ask(
    name: str, action: Action, context: SinkContext, built: dict[str, RunSink], *, explicit: bool
) -> SinkResult | None:
    """One sink's answer to `action` (None: the sink does not take part in it); whatever it raises is kept."""
    result = SinkResult(name)
    try:
        sink = built[name] = build_sink(name, context)
        result.title = getattr(sink, "title", name)
        result.resync = getattr(sink, "resync_command", f"scoregate sync {{run_id}} --to {name}")
        if isinstance(action, MirrorComparison):
            if (compares := ability(sink, ComparisonSink)) is None:
                return None
            result.report = _checked(sink, explicit) or compares.mirror_comparison(action.comparison)
        elif isinstance(action, MirrorShard):
            if (streams := ability(sink, ShardStreamingSink)) is None:
                return None
            result.report = _checked(sink, explicit) or streams.mirror_shard(action.store)
        elif isinstance(action, AdoptShards):
            if (adopts := ability(sink, ShardAdoptingSink)) is None:
                return None
            result.report = _checked(sink, explicit) or adopts.adopt_shards(action.store, action.shards)
        elif isinstance(action, FinishMirror):
            resumes = ability(sink, ResumableMirrorSink)
            if resumes is None or sink.configured() is not None or not resumes.cut_short(action.store):
                return None
            result.report = sink.mirror(action.store)
        elif isinstance(action, Mirror):
            result.report = _checked(sink, explicit) or sink.mirror(action.store)
            counts = ability(sink, ItemCountingSink)
            if action.count_items and counts is not None and result.report.skipped is None:
                result.report.problem = result.report.problem or counts.missing_items(result.report)
        elif isinstance(action, MarkInvalid):  # the sink says itself whether it holds a mirror to mark
            result.report = sink.mark_invalid(action.store, action.record)
        else:  # forgetting concerns what an earlier mirror recorded: asked even when the sink is off now
            sink.forget(action.store, set(action.item_ids))
    except Exception as exc:  # one sink failing never stops another, nor the command
        result.error, result.failure = redact(f"{type(exc).__name__}: {exc}"), exc
    _redact(result.report)
    return result


def _checked(sink: RunSink, explicit: bool) -> SinkReport | None:
    """A report saying the sink is skipped when it is off (and not asked for by name), else None."""
    reason = None if explicit else sink.configured()
    return SinkReport(skipped=f"{sink.name}: skipped — {reason}") if reason is not None else None


def _cross_link(
    store: RunStore, context: SinkContext, outcome: MirrorOutcome, built: dict[str, RunSink], skip: Collection[str]
) -> None:
    """Hand each sink's new links to every other sink that is on (asked now or not), so each mirror names the
    others; a link that fails is a note, never an error of the mirror."""
    made = {name: r.report.links for name, r in outcome.results.items() if r.report.links}
    for name in sink_names():
        others = {key: value for source, links in made.items() if source != name for key, value in links.items()}
        if not others or name in skip:
            continue
        try:
            sink = built.get(name) or build_sink(name, context)
            if sink.configured() is None:
                sink.link(store, others)
        except Exception as exc:  # the mirrors stand on their own; the next mirror links them again
            sources = ", ".join(source for source in made if source != name)
            outcome.notes.append(
                redact(f"{name}: could not record the links of {sources}: {type(exc).__name__}: {exc}")
            )


def _redact(report: SinkReport) -> None:
    """Mask every known secret in what a sink reported, before anyone prints or stores it."""
    report.lines = [redact(line) for line in report.lines]
    report.warnings = [redact(line) for line in report.warnings]
    report.skipped = redact(report.skipped) if report.skipped is not None else None
    report.problem = redact(report.problem) if report.problem is not None else None
