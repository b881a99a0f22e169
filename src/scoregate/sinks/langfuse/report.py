"""What one Langfuse mirror sent and what the server confirmed (`MirrorReport`), as the CLI prints it, and the
problems left (`judge`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.client import OLD_SERVER_HINT, SDK_MAJOR
from scoregate.integrations.langfuse.mirror_state import MirrorState

MAX_SDK_LINES = 20


@dataclass
class MirrorReport:
    """What one mirror sent and what the server confirmed; `problems` empty means the run is fully mirrored."""

    run_id: str
    host: str
    experiment_id: str | None = None
    experiment_url: str | None = None
    items_total: int = 0
    items_sent: int = 0
    items_confirmed: int = 0
    scores_sent: int = 0
    scores_accepted: int = 0
    scores_rejected: int = 0
    problems: list[str] = field(default_factory=list)
    hint: str | None = None
    warnings: list[str] = field(default_factory=list)
    dataset: str | None = None
    dataset_linked: bool | None = None
    """True: items linked to the synced Langfuse dataset; False: not synced; None: no item was sent now."""
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when every item's trace and scores and the run-level scores are confirmed."""
        return not self.problems

    @property
    def scores_unconfirmed(self) -> int:
        """Scores sent that the server neither accepted nor rejected (no answer came)."""
        return self.scores_sent - self.scores_accepted - self.scores_rejected

    def lines(self) -> list[str]:
        """Return the report as the CLI prints it."""
        out = [
            f"langfuse: experiment {self.experiment_id or '-'} {self.experiment_url or ''}".rstrip(),
            f"  items: {self.items_confirmed}/{self.items_total} mirrored ({self.items_sent} traces sent now)",
            f"  scores: {self.scores_sent} sent, {self.scores_accepted} accepted, {self.scores_rejected} rejected, "
            f"{self.scores_unconfirmed} unanswered",
        ]
        out += [f"  {n}" for n in self.notes]
        out += [f"  sdk: {w}" for w in self.warnings[:MAX_SDK_LINES]]
        out += [f"  problem: {p}" for p in self.problems]
        return out

    def problems_error(self) -> ScoregateError | None:
        """The error naming every problem (what `langfuse-sync` exits with), or None when there is none."""
        if not self.problems:
            return None
        listing = "\n".join([f"  - {p}" for p in self.problems] + [f"  sdk: {w}" for w in self.warnings[:5]])
        resync = f"fix the cause, then `scoregate langfuse-sync {self.run_id}` sends only what is missing"
        message = f"run {self.run_id} is not fully mirrored to Langfuse:\n{listing}"
        return ScoregateError(message, hint=self.hint or resync)


def judge(
    report: MirrorReport, state: MirrorState, server_errors: list[str], old_server: bool, *, run_level: bool = True
) -> None:
    """Turn what is still missing into problems, with the hint that fixes it."""
    missing_traces = report.items_total - state.counts()[0]
    if missing_traces:
        report.problems.append(f"{missing_traces} item trace(s) were not accepted by the server")
    if state.other_experiment_ids:
        report.warnings.append(
            f"langfuse SDK {SDK_MAJOR} cannot reuse an experiment id: later items landed in experiment(s) "
            f"{', '.join(state.other_experiment_ids)}"
        )
    if report.scores_rejected:
        errors = "; ".join(list(dict.fromkeys(server_errors))[:3])
        report.problems.append(f"{report.scores_rejected} of {report.scores_sent} scores were rejected: {errors}")
    if report.scores_unconfirmed:
        report.problems.append(f"{report.scores_unconfirmed} scores got no answer from the server (not confirmed)")
    not_done = report.items_total - report.items_confirmed
    if not_done and not report.problems:
        report.problems.append(f"{not_done} item(s) are not confirmed")
    if run_level and state.experiment_id and state.run_scores_digest is None and not report.problems:
        report.problems.append("the run-level scores are not confirmed")
    if old_server:
        report.hint = OLD_SERVER_HINT
