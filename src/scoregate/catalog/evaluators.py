"""An evaluator file as the catalog sees it: `kind:`, name, version, and what every kind answers about its files.

The catalog knows no kind. Each kind (`scoring/kinds/<kind>.py`, a track's `spec.py`) subclasses `EvaluatorSpec`
with the fields of its files, answers the questions below, and is one `EvaluatorKind`; the caller of project
loading passes the kinds (`catalog.project.read_project(root, kinds)`), so a file format never imports the code
that scores with it (docs/architecture.md, "Never").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar, Union

from pydantic import Field, TypeAdapter

from scoregate.catalog.models import Direction, ScoreKey, Strict
from scoregate.errors import ScoregateError

TEXT_PATH = r"^(output|expected_output|(input|metadata|output|expected_output)(\.[A-Za-z_][A-Za-z0-9_]*)+)$"
"""A path to a text an evaluator reads: `output`, `expected_output`, or a field under them, `input` or `metadata`."""


class EvaluatorSpec(Strict):
    """The fields every evaluator file has, and what each kind answers about its own files."""

    kind: str
    name: str
    version: int = Field(ge=1)
    description: str = ""

    def score_keys(self) -> list[str]:
        """Every key the file declares (what gates, composites and stage metrics may name), in order."""
        raise NotImplementedError(f"evaluator kind {self.kind!r} does not say which scores it writes")

    def directions(self) -> dict[str, Direction]:
        """Score key → which way it improves, for every numeric or boolean score the file declares."""
        raise NotImplementedError(f"evaluator kind {self.kind!r} does not say which way its scores improve")

    def described_scores(self) -> list[ScoreKey] | None:
        """The scores the file describes in full (type, range, categories, text); None: its evaluator's keys say."""
        return None

    def score_ranges(self) -> dict[str, tuple[float, float]]:
        """Score key → the inclusive [min, max] the file declares for it (none by default)."""
        return {}

    def named_models(self) -> list[str]:
        """The models the file names (`model:`), each of which must be defined in scoregate.yaml."""
        return []

    def models_called(self, default_judge: str) -> list[str]:
        """The models a run calls for this evaluator, given the run's judge model."""
        return []

    def problems(self, where: str) -> list[str]:
        """What stops the file from scoring, found without a model call (one rendered error each)."""
        return []


S = TypeVar("S", bound=EvaluatorSpec)


@dataclass(frozen=True)
class EvaluatorKind(Generic[S]):
    """One evaluator kind: its `kind:` name, its file's spec type and how to build its evaluator."""

    name: str
    spec: type[S]
    build: Callable[[S, str | None], Any]
    """(spec, the run's judge model or None) → the evaluator (a `scoregate.scoring.base.Evaluator`)."""


class EvaluatorKinds:
    """The kinds a project's evaluator files may name: parses a file's data and builds its evaluator."""

    def __init__(self, kinds: Iterable[EvaluatorKind[Any]]) -> None:
        self.kinds: dict[str, EvaluatorKind[Any]] = {}
        for kind in kinds:
            if kind.name in self.kinds:
                raise ValueError(f"two evaluator kinds are named {kind.name!r}")
            self.kinds[kind.name] = kind
        specs = tuple(kind.spec for kind in self.kinds.values())
        one_of: Any = specs[0] if len(specs) == 1 else Annotated[Union[specs], Field(discriminator="kind")]  # noqa: UP007
        self.adapter: TypeAdapter[EvaluatorSpec] = TypeAdapter(one_of)

    def parse(self, data: Any) -> EvaluatorSpec:
        """Validate one evaluator file's data into its kind's spec (raises pydantic's ValidationError)."""
        return self.adapter.validate_python(data)

    def build(self, spec: EvaluatorSpec, *, default_judge_model: str | None) -> Any:
        """Return the evaluator for `spec`; raises ScoregateError for a kind with no code or a bad spec."""
        kind = self.kinds.get(spec.kind)
        if kind is None:
            raise ScoregateError(
                f"evaluator kind {spec.kind!r} has no implementation",
                where=f"evaluator {spec.name}",
                hint=f"use one of: {', '.join(sorted(self.kinds))}",
            )
        return kind.build(spec, default_judge_model)
