"""`scoregate rollout start | status`: a canary of a gate-checked prompt version, and where each rollout stands.

Start refuses, before anything moves, a share that is not between 0% and 100%, a second rollout of the same
prompt, a project without Langfuse, and a prompt whose `production` label is on no version of the server (the
canary would have nothing to be compared with); then it moves the `canary` label through `promote` (the same
evidence `promote` requires: gates, the replay when the rules ask; audited in promotions.jsonl, the evidence
runs tagged in MLflow) and writes the local record (`rollout_record`). Langfuse's API adds labels and never
removes one, so "the canary removed" means the `canary` label moved to the version `production` holds: an
app that asks for `canary` then gets production's prompt.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.analysis.rollout_monitor import RolloutMonitor
from scoregate.analysis.rollout_rules import Guardrail, RolloutRule
from scoregate.analysis.sequential import SequentialInputError, difference_range
from scoregate.app.rollout_record import CANARY, PRODUCTION, ROLLOUTS, RolloutRecord, read_record, records, write_record
from scoregate.errors import ScoregateError, UsageError

if TYPE_CHECKING:
    from scoregate.app.rollout_watch import LiveScores, WatchOutcome

__all__ = ["RolloutRequest", "Rollouts", "label_holder", "parse_share"]


def parse_share(text: str) -> float:
    """Return a share written `10%` or `0.1` as a fraction in (0, 1); else a usage error saying what is expected."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(%?)\s*", text)
    value = (float(match.group(1)) / (100 if match.group(2) else 1)) if match else math.nan
    if not 0 < value < 1:
        raise UsageError(f"--share must be between 0% and 100%, not {text.strip()!r}: e.g. 10% or 0.1")
    return value


def _seconds(text: str) -> float:
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([smhd]?)\s*", text)
    if not match or float(match.group(1)) <= 0:
        raise UsageError(f"--window must be a duration such as 30m, 1h or 3600, not {text!r}")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]


def label_holder(prompt: str, label: str) -> int | None:
    """Return the Langfuse version of `prompt` holding `label` (`latest`: the newest), None when there is none."""
    from scoregate.integrations.langfuse.client import require_settings
    from scoregate.integrations.langfuse.remote import Remote, path_part

    remote = Remote(require_settings())
    found = remote.find(f"reading prompt {prompt!r}", remote.api.prompts.get, path_part(prompt), label=label)
    return int(found.version) if found is not None else None


@dataclass(frozen=True)
class RolloutRequest:
    """What `rollout start` asks: the version, share, deciding metric and its rule, the guardrails."""

    version: int
    share: str
    metric: str
    score_range: tuple[float, float] = (0.0, 1.0)
    question: str = "non-inferior"
    margin: float = 0.0
    lower_is_better: bool = False
    window: str = "1h"
    guardrails: tuple[str, ...] = ()
    """`NAME=LIMIT` each (error_rate, p95_latency_ms, cost_per_call_usd)."""
    alpha: float = 0.05

    def rule(self) -> RolloutRule:
        """Return the rollout rule, or a usage error naming the bad option."""
        guards = []
        for text in self.guardrails:
            name, _, limit = text.partition("=")
            try:
                guards.append(Guardrail(name.strip(), float(limit)))  # type: ignore[arg-type]
            except (ValueError, SequentialInputError) as exc:
                raise UsageError(f"--guardrail {text!r}: {exc}; write NAME=LIMIT, e.g. error_rate=0.05") from None
        low, high = self.score_range
        if low == high:  # a range without width: every difference is 0, the test never decides
            raise UsageError(
                f"--range {low:g},{high:g} is not a finite [min, max] with min below max: give the deciding score's "
                "range, e.g. 0,1 or 1,5",
                option="--range",
            )
        try:
            lo, hi = difference_range(*self.score_range)
            return RolloutRule(
                lo=lo, hi=hi, share=parse_share(self.share), question=self.question,  # type: ignore[arg-type]
                margin=self.margin, direction="lower" if self.lower_is_better else "higher", alpha=self.alpha,
                window_s=_seconds(self.window), guardrails=tuple(guards),
            )  # fmt: skip
        except SequentialInputError as exc:
            raise UsageError(f"{exc.where or 'rollout'}: {exc.message}") from None


@dataclass
class RolloutView:
    """One rollout for `rollout status`: its record and the last reading."""

    record: RolloutRecord
    last: dict[str, Any] | None = None
    command: str | None = None
    """What to run next, in words."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return {**self.record.to_dict(), "last": self.last, "command": self.command}


@dataclass
class Rollouts:
    """The rollouts of the project at `root`: start one, show where each stands, watch one (`rollout_watch`)."""

    root: Path
    notes: list[str] = field(default_factory=list)

    def start(self, prompt: str, **request: Any) -> RolloutRecord:
        """Check the request (the fields of `RolloutRequest`), move `canary` to the version through `promote`, write
        the record; return it."""
        from scoregate.app.promotion import promote
        from scoregate.integrations.langfuse.client import LangfuseSettings

        asked = RolloutRequest(**request)
        rule = asked.rule()
        existing = read_record(self.root, prompt)
        if existing is not None and existing.state == "live":
            raise ScoregateError(
                f"a rollout of {prompt!r} is live since {existing.started_at} (v{existing.candidate} at "
                f"{existing.share:.0%})",
                hint=f"watch it to a decision: `scoregate rollout watch {prompt}`",
            )
        if LangfuseSettings.from_env() is None:
            raise ScoregateError(
                "a rollout moves Langfuse labels, and Langfuse is not configured",
                hint="set LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_HOST",
            )
        production = self._production(prompt)
        if production == asked.version:
            raise ScoregateError(f"v{asked.version} of {prompt!r} already holds `production`: nothing to canary")
        moved = promote(self.root, prompt, version=asked.version, label=CANARY)
        self.notes += moved.warnings
        record = RolloutRecord(
            prompt, asked.version, production, rule.share, asked.metric, datetime.now(UTC).isoformat(),
            monitor=RolloutMonitor.start(rule).to_dict(),
        )  # fmt: skip
        write_record(self.root, record)
        return record

    def _production(self, prompt: str) -> int:
        if label_holder(prompt, "latest") is None:
            raise ScoregateError(
                f"no prompt {prompt!r} on the Langfuse server", hint="sync it first: `scoregate prompts sync`"
            )
        holder = label_holder(prompt, PRODUCTION)
        if holder is None:
            raise ScoregateError(
                f"prompt {prompt!r} has no version labelled `production` on the Langfuse server, so a canary has "
                "nothing to be compared with",
                hint=f"promote a version first: `scoregate promote {prompt} --version N`",
            )
        return holder

    def status(self, prompt: str | None = None) -> list[RolloutView]:
        """Return every rollout of the project (or one prompt's), with its last reading and what to run next."""
        found = records(self.root) if prompt is None else [r for r in [read_record(self.root, prompt)] if r]
        if prompt is not None and not found:
            raise ScoregateError(f"no rollout of prompt {prompt!r} in {self.root / ROLLOUTS}")
        return [self._view(r) for r in found]

    def watch(
        self, prompt: str, scores: Path | None = None, *, environment: str | None = None, **options: Any
    ) -> WatchOutcome:
        """Watch the rollout of `prompt` (`rollout_watch.watch_rollout`) on the live scores of the JSON-lines file
        `scores`, or by default on the calls (of `environment` when given) and scores Langfuse holds
        (`rollout_live`)."""
        from scoregate.app.rollout_watch import ScoreFile, watch_rollout

        if scores is not None and environment is not None:
            raise UsageError("--environment selects Langfuse traces; a --scores FILE has no environment: drop one")
        source = ScoreFile(scores) if scores is not None else self._langfuse_scores(prompt, environment)
        return watch_rollout(self.root, prompt, source, **options)

    def _langfuse_scores(self, prompt: str, environment: str | None) -> LiveScores:
        from scoregate.app.rollout_live import LangfuseLiveScores
        from scoregate.app.rollout_record import live_record
        from scoregate.integrations.langfuse.client import LangfuseSettings
        from scoregate.integrations.langfuse.remote import Remote

        record = live_record(self.root, prompt)
        settings = LangfuseSettings.from_env()
        if settings is None:
            raise ScoregateError(
                f"no live scores to read for {prompt!r}: Langfuse is not configured and no --scores FILE was given",
                hint="set LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_HOST, or pass --scores FILE",
            )
        started = datetime.fromisoformat(record.started_at)
        return LangfuseLiveScores(Remote(settings), record.metric, started, environment)

    def _view(self, record: RolloutRecord) -> RolloutView:
        last = record.readings[-1] if record.readings else None
        command = None
        if record.state == "live":
            pending = last is not None and last["decision"] != "continue"
            command = f"scoregate rollout watch {record.prompt}" + (" --auto" if pending else "")
        return RolloutView(record, last, command)
