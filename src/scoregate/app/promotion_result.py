"""What a `scoregate promote` or `rollback` found and did: the versions, the evidence, the judges, the record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from scoregate.app.promotion_evidence import Evidence
from scoregate.app.run.judge_gates import JudgeCheck

NO_LANGFUSE = (
    "Langfuse is not configured: the version is the prompt file's and the label is held in promotions.jsonl "
    "alone (the regression gates read it there)"
)


@dataclass
class PromotionResult:
    """What a promote or rollback found and did."""

    action: Literal["promote", "rollback"]
    prompt: str
    label: str
    version: int | str
    """A Langfuse version, or a prompt file's `local-<hash>` (a dry run without Langfuse)."""
    previous_version: int | str | None
    evidence: list[Evidence] = field(default_factory=list)
    forced: bool = False
    applied: bool = False
    unchanged: bool = False
    mlflow_alias: int | None = None
    record: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    undoes: str | None = None
    """For a rollback: the time of the promotion it undoes."""
    undone_runs: list[str] = field(default_factory=list)
    """For a rollback: the MLflow evidence runs of the promotion it undoes (tagged with the rollback)."""
    langfuse: bool = True
    """False without Langfuse: a prompt file's version, the label held in promotions.jsonl alone."""
    judges: list[JudgeCheck] = field(default_factory=list)
    """The pinned judges deciding the gates: calibrated and undrifted, or why not (`canaries:`)."""

    @property
    def local_note(self) -> str | None:
        """Why the label moved in promotions.jsonl alone (no Langfuse is configured), else None."""
        return None if self.langfuse else NO_LANGFUSE

    @property
    def failures(self) -> list[str]:
        """Each experiment whose gates did not pass, and each deciding judge that drifted, with why."""
        gates = [f"{e.experiment}: {e.problem}" for e in self.evidence if not e.passed]
        return gates + [f"{', '.join(j.gates)}: {j.problem}" for j in self.judges if j.problem]
