"""An evaluator file as the catalog sees it: `kind:`, name, version, and what every kind declares.

The catalog knows no kind. Each kind (`scoring/kinds/<kind>.py`, a track's `kind.py`) subclasses
`EvaluatorSpec` with the fields of its files and answers the questions below; the caller of project
loading passes the kinds' parser (`catalog.project.load_project(root, evaluators=...)`), so a file format
never imports the code that scores with it (docs/architecture.md, "Never").
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from scoregate.catalog.models import Direction, ScoreDataType, Strict

TEXT_PATH = r"^(output|expected_output|(input|metadata|output|expected_output)(\.[A-Za-z_][A-Za-z0-9_]*)+)$"
"""A path to a text an evaluator reads: `output`, `expected_output`, or a field under them, `input` or `metadata`."""


@dataclass(frozen=True, slots=True)
class DeclaredScore:
    """One score key an evaluator file declares: what it is, which way it improves, and its bounds."""

    key: str
    data_type: ScoreDataType
    direction: Direction | None = None
    """`higher`, `lower` or `none`; None: not a metric at all (a text the evaluator keeps beside its scores)."""
    range: tuple[float, float] | None = None
    """Inclusive [min, max] of a numeric score, when the file states one."""
    categories: tuple[str, ...] | None = None
    description: str = ""
    per_item: bool = True
    """False: a run-level value a track adds to the summary for gates (e.g. the tags track's `topic_f1_micro`)."""
    explains: str | None = None
    """The key this text explains (a judge's reasoning): stored and mirrored, but no score of its own."""


class EvaluatorSpec(Strict):
    """The fields every evaluator file has, and what each kind answers about its own files."""

    kind: str
    name: str
    version: int = Field(ge=1)
    description: str = ""

    def declared_scores(self) -> list[DeclaredScore]:
        """Every score key the file declares, in the order the evaluator writes them."""
        raise NotImplementedError(f"evaluator kind {self.kind!r} does not say which scores it writes")

    def score_keys(self) -> list[str]:
        """The declared keys, in order (what gates, composites and stage metrics may name)."""
        return [score.key for score in self.declared_scores()]

    def directions(self) -> dict[str, Direction]:
        """Score key → which way it improves, for every declared score that is a metric."""
        return {s.key: s.direction for s in self.declared_scores() if s.direction is not None}

    def named_models(self) -> list[str]:
        """The models the file names (`model:`), each of which must be defined in scoregate.yaml."""
        return []

    def models_called(self, default_judge: str) -> list[str]:
        """The models a run calls for this evaluator, given the run's default judge model."""
        return []

    def problems(self, default_judge: str, where: str) -> list[str]:
        """What stops this evaluator from scoring (checked before any model call), one `where: ...` line each."""
        return []
