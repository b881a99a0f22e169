"""What one Langfuse mirror sent and what the server confirmed (`MirrorReport`), as the CLI prints it, and the
problems left (`judge`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from scoregate.errors import MirrorRefused, ScoregateError
from scoregate.integrations.langfuse.client import SDK_MAJOR
from scoregate.integrations.langfuse.mirror_state import MirrorState
from scoregate.integrations.langfuse.score_sender import ScoreLedger
from scoregate.integrations.langfuse.server_generation import ServerGeneration

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
    server: ServerGeneration | None = None
    """The server's generation as the mirror read it (None: it did not answer)."""
    switched: bool = False
    """The server refused a score array although its version said it takes one: scores went as events."""
    scores_form: str | None = None
    """The form the scores really went in (`array` or `ingestion`); None: as `server.scores` says (none sent)."""
    refused: bool = False
    """The server answered that it will not take what was sent (scores, or the keys): a retry alone will not do."""

    @property
    def complete(self) -> bool:
        """True when every item's trace and scores and the run-level scores are confirmed."""
        return not self.problems

    @property
    def scores_unconfirmed(self) -> int:
        """Scores sent that the server neither accepted nor rejected (no answer came)."""
        return self.scores_sent - self.scores_accepted - self.scores_rejected

    def lines(self, *, problems: bool = True) -> list[str]:
        """Return the report as the CLI prints it; `problems=False` leaves out the problem lines (a caller that
        prints the problems itself, once)."""
        out = [
            f"langfuse: experiment {self.experiment_id or '-'} {self.experiment_url or ''}".rstrip(),
            f"  items: {self.items_confirmed}/{self.items_total} mirrored ({self.items_sent} traces sent now)",
            f"  scores: {self.scores_sent} sent, {self.scores_accepted} accepted, {self.scores_rejected} rejected, "
            f"{self.scores_unconfirmed} unanswered",
        ]
        if self.server is not None:
            used = self.scores_form or self.server.scores
            form = "batches" if used == "array" else "score-create events"
            shown = "version not shown" if self.server.version == "unknown" else self.server.version
            switched = " (the server refused them as one array although its version takes one)" if self.switched else ""
            out.append(f"  server {shown}: scores posted as {form}{switched}")
        out += [f"  {n}" for n in self.notes]
        out += [f"  sdk: {w}" for w in self.warnings[:MAX_SDK_LINES]]
        out += [f"  problem: {p}" for p in self.problems] if problems else []
        return out

    def problems_error(self) -> ScoregateError | None:
        """The error naming every problem (what `langfuse-sync` exits with), or None when there is none."""
        if not self.problems:
            return None
        listing = "\n".join([f"  - {p}" for p in self.problems] + [f"  sdk: {w}" for w in self.warnings[:5]])
        resync = f"fix the cause, then `scoregate langfuse-sync {self.run_id}` sends only what is missing"
        message = f"run {self.run_id} is not fully mirrored to Langfuse:\n{listing}"
        kind = MirrorRefused if self.refused else ScoregateError
        return kind(message, hint=self.hint or resync)


def refusal_hint(run_id: str, server_errors: list[str]) -> str:
    """What fixes a mirror whose scores the server refused: the keys, or what the server named."""
    again = f"`scoregate langfuse-sync {run_id}` sends only what is missing (the run is stored)"
    if any(e.startswith(("HTTP 401", "HTTP 403")) for e in server_errors):
        return (
            "Langfuse refused these API keys for scores: use keys of this project with write access "
            f"(LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY), then {again}"
        )
    return f"fix what the server names above (e.g. a score config in Langfuse that the scores do not fit), then {again}"


def judge(report: MirrorReport, state: MirrorState, ledger: ScoreLedger, *, run_level: bool = True) -> None:
    """Turn what is still missing into problems, with the hint that fixes it."""
    server_errors = ledger.server_errors
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
        report.refused, report.hint = True, refusal_hint(report.run_id, server_errors)
    if report.scores_unconfirmed:
        why = f": {server_errors[-1]}" if server_errors and not report.scores_rejected else ""
        report.problems.append(f"{report.scores_unconfirmed} scores got no answer from the server (not confirmed){why}")
    not_done = report.items_total - report.items_confirmed
    if not_done and not report.problems:
        report.problems.append(f"{not_done} item(s) are not confirmed")
    if run_level and state.experiment_id and state.run_scores_digest is None and not report.problems:
        report.problems.append("the run-level scores are not confirmed")
