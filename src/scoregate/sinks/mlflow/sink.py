"""MLflow as a `RunSink`: one MLflow run per scoregate run (and per comparison), in the project's tracking store.

MLflow is always on: its store is the embedded sqlite file `mlflow.db` unless MLFLOW_TRACKING_URI names a server.
Nothing here imports mlflow at module level: the sink is built on every mirror, mlflow only where it is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scoregate.errors import ScoregateError
from scoregate.sinks.contract import Comparison, SinkContext, SinkReport
from scoregate.store.invalidation import VALID_TAG, invalidation_tags

if TYPE_CHECKING:
    from scoregate.store.run_store import RunStore

RUN_LINK = "mlflow_run_id"
"""The key of the MLflow run id in the run's links (and in the links handed to the other sinks)."""


class MlflowSink:
    """Mirror runs and comparisons to MLflow; tag the run with the other mirrors' links."""

    name = "mlflow"

    def __init__(self, context: SinkContext) -> None:
        self.context = context

    def configured(self) -> str | None:
        """Always on: the embedded store needs no set-up."""
        return None

    def mirror(self, store: RunStore) -> SinkReport:
        """Create or update the run's MLflow run; with `item_rows`, also its evaluation rows (a failure there keeps
        the mirrored run and is the report's problem)."""
        from scoregate.sinks.mlflow.run_mirror import mirror_run

        root = self.context.project_root
        run_id = mirror_run(store, project_root=root, record=self.context.record(store))
        report = SinkReport(
            link=run_id,
            links={RUN_LINK: run_id},
            lines=[f"mlflow: run {run_id}  (browse with `make mlflow-ui`)"],
        )
        if self.context.item_rows:
            from scoregate.sinks.mlflow.eval_rows import log_item_rows

            try:
                report.item_rows = log_item_rows(store, project_root=root, mlflow_run_id=run_id)
            except Exception as exc:  # the run is mirrored; `mlflow-sync --eval-rows` writes the rows again
                report.problem, report.error = f"{type(exc).__name__}: {exc}", _rows_error(exc, store.run_id)
            else:
                report.lines.append(f"mlflow: {report.item_rows} evaluation rows (one per item) on the run")
        return report

    def mark_invalid(self, store: RunStore, record: Mapping[str, Any]) -> SinkReport:
        """Tag the run's MLflow run `scoregate.valid=false` with the reason (skipped when it was never mirrored)."""
        run_id = store.links.get(RUN_LINK)
        if not run_id:
            return SinkReport(skipped="mlflow: the run was not mirrored (`scoregate mlflow-sync` would carry the mark)")
        from scoregate.sinks.mlflow.client import project_client

        client = project_client(self.context.project_root)
        for key, value in invalidation_tags(dict(record)).items():
            client.set_tag(run_id, key, value)
        return SinkReport(link=str(run_id), lines=[f"mlflow: run {run_id} tagged {VALID_TAG}=false"])

    def forget(self, store: RunStore, item_ids: set[str]) -> None:
        """Nothing to forget: every mirror rewrites the run's metrics and artifacts from the store."""

    def link(self, store: RunStore, links: Mapping[str, str]) -> None:
        """Tag the run's MLflow run with each link of the other mirrors (`langfuse.experiment_url`...)."""
        run_id = store.links.get(RUN_LINK)
        if not run_id:
            return
        from scoregate.sinks.mlflow.client import project_client

        client = project_client(self.context.project_root)
        for key, value in links.items():
            client.set_tag(run_id, key, value)

    def mirror_comparison(self, comparison: Comparison) -> SinkReport:
        """Create or update the comparison's MLflow run; with `item_rows`, both runs' evaluation rows too."""
        from scoregate.sinks.mlflow.compare import log_evaluation_rows, mirror_comparison

        root = self.context.project_root
        mirrored = mirror_comparison(comparison, project_root=root)
        report = SinkReport(link=mirrored.run_id, warnings=list(mirrored.warnings))
        if self.context.item_rows:
            for store in (comparison.run_a, comparison.run_b):
                try:
                    log_evaluation_rows(store, project_root=root)
                except Exception as exc:  # the comparison is mirrored; rows can be logged again later
                    report.warnings.append(f"evaluation rows of {store.run_id} not logged: {exc}")
        return report


def _rows_error(exc: Exception, run_id: str) -> BaseException:
    """What `mlflow-sync --eval-rows` says when the rows failed: MLflow's refusal in words, else the error itself."""
    from mlflow.exceptions import MlflowException

    if isinstance(exc, MlflowException):
        return ScoregateError(
            f"MLflow refused the evaluation rows of run {run_id}: {exc.message}",
            hint="the run itself is mirrored; report this with the message above",
        )
    return exc
