"""What the CLI shows about the project itself: its validation, its experiments, which way each score improves."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoregate.catalog.models import Direction
    from scoregate.tracks.project import Project


class ProjectOverview:
    """The project at `root` as `validate`, `experiments` and a run's summary show it (its files loaded once)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @cached_property
    def project(self) -> Project:
        """The project's files, loaded once."""
        from scoregate.tracks.project import load_project

        return load_project(self.root)

    def check(self) -> list[tuple[str, str]]:
        """Check every dataset, prompt, evaluator and experiment, and every model's provider and options (no model is
        called); return a (status, line) per checked thing (`ok`, or `empty`: an experiment whose dataset has no
        items), raise ValidationFailed on problems."""
        from scoregate.app.validation import validate

        return validate(self.project)

    def experiments(self) -> list[dict[str, Any]]:
        """The experiments of scoregate.yaml (what `scoregate run NAME` accepts): dataset, prompts, model,
        evaluators, and the gates that judge its runs (a gate limited to other datasets does not)."""
        from scoregate.catalog.routing import route_prompts

        config = self.project.config
        datasets_of = {gate.name: gate.datasets for gate in config.gates}
        return [
            {
                "name": name,
                "dataset": spec.dataset,
                "prompts": route_prompts(spec.prompt),
                "model": spec.model or config.settings.model,
                "evaluators": list(spec.evaluators),
                "gates": [
                    g for g in spec.gates if datasets_of.get(g) is None or spec.dataset in (datasets_of[g] or [])
                ],
            }
            for name, spec in config.experiments.items()
        ]

    def score_directions(self) -> dict[str, Direction]:
        """Metric → the way it improves (higher, lower, none) for every score and run metric of the project."""
        from scoregate.catalog.directions import project_directions

        return project_directions(self.project)
