"""The one user-facing error type and the CLI's exit codes."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes, distinct so scripts and CI can tell failures apart."""

    OK = 0
    ERROR = 1
    USAGE = 2
    GATES_FAILED = 3
    UNDECIDED = 4
    """The gates could not decide: the run is incomplete (e.g. `scoregate merge` with items or shards missing)."""
    MIRROR_REFUSED = 5
    """A tracker refused what the run sent (Langfuse answered that it will not take its scores): the run is
    stored, its mirror is not, and sending it again changes nothing until the cause named is fixed."""
    INTERRUPTED = 130
    TERMINATED = 143


class ScoregateError(Exception):
    """An error the user can fix: rendered as one clear message, never a traceback.

    `where` names the file, line or field; `hint` says what to do next.
    """

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint

    def render(self) -> str:
        """Return the message as the CLI prints it: `where: message` then the hint."""
        head = f"{self.where}: {self.message}" if self.where else self.message
        return f"{head}\n  → {self.hint}" if self.hint else head


class ValidationFailed(ScoregateError):
    """One or more user files are invalid; `problems` lists each `where: message`."""

    def __init__(self, problems: list[str], *, hint: str | None = None) -> None:
        self.problems = problems
        count = len(problems)
        listing = "\n".join("  - " + p.replace("\n", "\n  ") for p in problems)  # a problem's hint under its bullet
        summary = f"{count} problem{'s' if count != 1 else ''} found:\n" + listing
        super().__init__(summary, hint=hint)


class MirrorRefused(ScoregateError):
    """A tracker answered that it will not take what a run sent (not an outage: a retry alone will not help)."""

    exit_code = ExitCode.MIRROR_REFUSED


class ProviderUnavailable(ScoregateError):
    """A model endpoint cannot be reached at all."""


class RunInterrupted(ScoregateError):
    """The run was stopped (Ctrl-C, SIGTERM, or the circuit breaker); finished items are kept."""

    exit_code = ExitCode.INTERRUPTED

    def __init__(self, message: str, *, hint: str | None = None, exit_code: ExitCode = ExitCode.INTERRUPTED) -> None:
        super().__init__(message, hint=hint)
        self.exit_code = exit_code


class UsageError(ScoregateError):
    """Options that contradict each other (exit code 2); `option` names the one to change, when one is to blame."""

    exit_code = ExitCode.USAGE

    def __init__(self, message: str, *, option: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.option = option
