"""MLflow as a `RunSink`: one MLflow run per scoregate run (and per comparison), in the project's tracking store.

MLflow is always on: its store is the embedded sqlite file `mlflow.db` unless MLFLOW_TRACKING_URI names a server.
Nothing here imports mlflow: a run's mirror, its invalidation and its links are done in MLflow's own process
(`worker.py`), so the command never holds MLflow's ~200 MB; a comparison is mirrored in the command's process.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scoregate.sinks.contract import Comparison, SinkContext, SinkReport
from scoregate.store.invalidation import VALID_TAG

if TYPE_CHECKING:
    from scoregate.store.run_store import RunStore

RUN_LINK = "mlflow_run_id"
"""The key of the MLflow run id in the run's links (and in the links handed to the other sinks)."""


class MlflowSink:
    """Mirror runs and comparisons to MLflow; tag the run with the other mirrors' links. Its abilities: it mirrors
    comparisons and tells a mirror a kill cut short (a resume of the finished run completes it)."""

    name = "mlflow"
    title = "MLflow"
    resync_command = "scoregate mlflow-sync {run_id}"

    def __init__(self, context: SinkContext) -> None:
        self.context = context

    def configured(self) -> str | None:
        """Always on: the embedded store needs no set-up."""
        return None

    def mirror(self, store: RunStore) -> SinkReport:
        """Create or update the run's MLflow run; with `item_rows`, also its evaluation rows (a failure there keeps
        the mirrored run and is the report's problem). MLflow works in its own process (`process.py`)."""
        from scoregate.sinks.mlflow.process import ask, rebuilt

        record = self.context.record(store)
        summary = record.summary.to_dict() if record.summary is not None else None
        done = ask(
            {
                "action": "mirror",
                "project_root": str(self.context.project_root),
                "run_dir": str(store.directory),
                "record": {"manifest": record.manifest.to_dict(), "summary": summary},
                "item_rows": self.context.item_rows,
            }
        )
        run_id = str(done["run_id"])
        report = SinkReport(
            link=run_id,
            links={RUN_LINK: run_id},
            lines=[f"mlflow: run {run_id}  (browse with `make mlflow-ui`)"],
            created=bool(done.get("created")),
        )
        if done["rows_error"] is not None:
            report.problem, report.error = done["rows_problem"], rebuilt(done["rows_error"])
        elif done["item_rows"] is not None:
            report.item_rows = int(done["item_rows"])
            report.lines.append(f"mlflow: {report.item_rows} evaluation rows (one per item) on the run")
        return report

    def cut_short(self, store: RunStore) -> bool:
        """True when the run's MLflow run id was never recorded: its mirror was killed before it finished."""
        return RUN_LINK not in store.links

    def mark_invalid(self, store: RunStore, record: Mapping[str, Any]) -> SinkReport:
        """Tag the run's MLflow run `scoregate.valid=false` with the reason (skipped when it was never mirrored)."""
        run_id = store.links.get(RUN_LINK)
        if not run_id:
            return SinkReport(skipped="mlflow: the run was not mirrored (`scoregate mlflow-sync` would carry the mark)")
        self._set_tags(str(run_id), invalidation=dict(record))
        return SinkReport(link=str(run_id), lines=[f"mlflow: run {run_id} tagged {VALID_TAG}=false"])

    def forget(self, store: RunStore, item_ids: set[str]) -> None:
        """Nothing to forget: every mirror rewrites the run's metrics and artifacts from the store."""

    def link(self, store: RunStore, links: Mapping[str, str]) -> None:
        """Tag the run's MLflow run with each link of the other mirrors (`langfuse.experiment_url`...)."""
        run_id = store.links.get(RUN_LINK)
        if run_id:
            self._set_tags(str(run_id), tags=dict(links))

    def _set_tags(self, run_id: str, **what: dict[str, Any]) -> None:
        """Set tags on an MLflow run (in MLflow's process): `invalidation=` a record's, or `tags=` these."""
        from scoregate.sinks.mlflow.process import ask

        ask({"action": "set_tags", "project_root": str(self.context.project_root), "mlflow_run_id": run_id, **what})

    def mirror_comparison(self, comparison: Comparison) -> SinkReport:
        """Create or update the comparison's MLflow run; with `item_rows`, both runs' evaluation rows too."""
        from scoregate.sinks.mlflow.compare import log_evaluation_rows, mirror_comparison

        root = self.context.project_root
        mirrored = mirror_comparison(comparison, project_root=root)
        report = SinkReport(
            link=mirrored.run_id,
            lines=[f"mlflow: comparison run {mirrored.run_id}  (browse with `make mlflow-ui`)"],
            warnings=list(mirrored.warnings),
        )
        if self.context.item_rows:
            for store in (comparison.run_a, comparison.run_b):
                try:
                    log_evaluation_rows(store, project_root=root)
                except Exception as exc:  # the comparison is mirrored; rows can be logged again later
                    report.warnings.append(f"evaluation rows of {store.run_id} not logged: {exc}")
        return report
