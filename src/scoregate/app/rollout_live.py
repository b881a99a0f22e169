"""The live scores `scoregate rollout watch` reads from Langfuse by default (`integrations.langfuse.live_calls`).

Each poll returns the calls of the two versions linked on the server since the cursor, with the rollout's deciding
metric (the score `traces score` or a server-side judge posted under that key) on each one's trace. A call whose
trace has no such score yet is not counted until it has one; a failed call counts at once, and a call unscored
for a day counts without a score (in the split and the guardrails, not in the metric). Only calls that started
after the rollout did are read.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scoregate.app.rollout_watch import LiveTrace

if TYPE_CHECKING:
    from scoregate.integrations.langfuse.remote import Remote

__all__ = ["LangfuseLiveScores"]


@dataclass
class LangfuseLiveScores:
    """Live scores read from Langfuse: the generations linked to each version and the `metric` on their traces."""

    remote: Remote
    metric: str
    started_at: dt.datetime
    environment: str | None = None
    """Only the calls logged in this Langfuse environment (a mirrored experiment run's calls are in another)."""

    def poll(self, prompt: str, versions: tuple[int, int], cursor: str | None) -> tuple[list[LiveTrace], str | None]:
        """Return the calls of `versions` counted since `cursor` (scored, failed or past their wait), and the cursor."""
        from scoregate.integrations.langfuse.live_calls import read_live_calls

        calls, after = read_live_calls(
            self.remote, prompt, versions, self.metric, cursor, start=self.started_at, environment=self.environment
        )
        traces = [LiveTrace(c.at, c.version, c.session, c.score, c.error, c.latency_ms, c.cost_usd) for c in calls]
        return traces, after
