"""Inspecting the local run store: `runs list`, `runs show` (a run, its items, one item) and `diff`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.store.run_store import RunStore

if TYPE_CHECKING:
    from scoregate.analysis.items import ItemTable
    from scoregate.analysis.run_diff import RunDiff
    from scoregate.catalog.models import Direction
    from scoregate.store.identity import RunOverview
    from scoregate.store.record import Manifest, RunSummary


@dataclass(frozen=True)
class ListedRun:
    """One run of `runs list`: its overview, or why it cannot be read (`problem`: its damaged file)."""

    run_id: str
    overview: RunOverview | None
    problem: str | None = None
    invalid: bool = False
    """The run was marked invalid (`scoregate runs invalidate`)."""
    items: int | None = None
    finished_at: str | None = None

    def to_dict(self) -> dict[str, object]:
        """One run as JSON: its overview (model, prompts, dataset, items, primary metric, verdict), or `damaged`."""
        if self.overview is None:
            return {"run_id": self.run_id, "status": "damaged", "problem": self.problem}
        return {**self.overview.to_dict(), "items": self.items, "finished_at": self.finished_at}


class RunView:
    """One stored run as `runs show` reads it: its files (read when asked) and the project's score directions."""

    def __init__(self, root: Path, store: RunStore, directions: dict[str, Direction]) -> None:
        self._root, self._store = root, store
        self.directions = directions
        self.run_id, self.directory = store.run_id, store.directory

    @property
    def manifest(self) -> dict[str, Any]:
        """The run's receipts and options (manifest.json)."""
        return self._store.manifest

    @property
    def summary(self) -> dict[str, Any] | None:
        """The run's summary, when it has one."""
        return self._store.summary

    @property
    def manifest_record(self) -> Manifest:
        """The run's manifest as the typed record (read from its file each time: read once, pass it down)."""
        return self._store.manifest_record

    @property
    def summary_record(self) -> RunSummary | None:
        """The run's summary as the typed record, when it has one (read from its file each time)."""
        return self._store.summary_record

    @property
    def links(self) -> dict[str, Any]:
        """Where the run is mirrored (links.json)."""
        return self._store.links

    @property
    def limit(self) -> int | None:
        """The run's `--limit` when it left items out, else None."""
        from scoregate.store.identity import run_limit

        return run_limit(self.manifest_record)

    def mlflow_ui(self) -> str | None:
        """The MLflow UI page of the run's experiment (its Runs tab), when the run is mirrored and has a UI."""
        from scoregate.sinks.mlflow.client import tracking_uri
        from scoregate.sinks.mlflow.experiments import ui_link

        experiment_id = self.links.get("mlflow_experiment_id")
        return ui_link(tracking_uri(self._root), str(experiment_id)) if experiment_id else None

    def item_table(
        self, *, worst: int | None = None, by: str | None = None, failed: bool = False, gate: str | None = None
    ) -> ItemTable:
        """The run's items as rows (all, the worst K by a score, the failed ones, those breaking a gate), streamed."""
        from scoregate.analysis.items import item_table

        return item_table(self._store, worst=worst, by=by, failed=failed, gate=gate, directions=self.directions)


class StoredRuns:
    """The project's local run store (`root/runs`), as `runs list`, `runs show` and `diff` read it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs = root / "runs"

    def listed(self) -> list[ListedRun]:
        """Every run, newest first; a damaged run is listed with its problem, never hiding others."""
        from scoregate.store.identity import run_overview
        from scoregate.store.invalidation import INVALIDATION_FILE
        from scoregate.store.run_store import DamagedRun, list_runs

        listed = []
        for store in list_runs(self.runs):
            try:
                overview = run_overview(store)
                manifest, summary = store.manifest_record, store.summary_record
            except DamagedRun as exc:
                listed.append(ListedRun(store.run_id, None, exc.render()))
                continue
            invalid = (store.directory / INVALIDATION_FILE).is_file()
            items = summary.run_metrics.value("items") if summary else None
            items = int(items) if items is not None else None
            listed.append(ListedRun(store.run_id, overview, None, invalid, items, manifest.finished_at))
        return listed

    def view(self, run_id: str) -> RunView:
        """Open a run (a clear error when there is none) with the project's score directions."""
        from scoregate.app.project_info import ProjectOverview

        return RunView(self.root, RunStore.open(self.runs, run_id), ProjectOverview(self.root).score_directions())

    def item(self, run_id: str, item_id: str) -> dict[str, Any]:
        """One item of a run in full: input, output, expected output, every score with its reason, every call."""
        from scoregate.analysis.items import item_detail

        return item_detail(RunStore.open(self.runs, run_id), item_id)

    def diff(
        self, run_a: str, run_b: str, *, by: str | None = None, item: str | None = None, limit: int | None = None
    ) -> RunDiff:
        """The items two runs share, largest change of `by` first (`scoregate diff`); read as they are listed."""
        from scoregate.analysis.run_diff import diff_runs

        a, b = RunStore.open(self.runs, run_a), RunStore.open(self.runs, run_b)
        return diff_runs(a, b, by=by, item=item, limit=limit)
