"""What each mirrored trace carries for dashboards: the item's dimensions, its style, tags, version and name.

Langfuse v4 reads a trace's tags, version and name from the trace's root span (in its events tables, the span
without a parent: the SDK runner's `experiment-item-run`, recorded on v4.16), and a dashboard filters and
groups scores by them. The runner opens that span before the task runs, so the task sets the attributes on
it (through the SDK's own `propagate_attributes`, with the root span made current) as well as on the
task's span and everything recorded below it.

A widget groups by a dimension with one value per trace (`traceName`, `traceVersion`, ...): a `tags`
dimension groups by the whole tag array, one row per distinct tag set. So a trace is named after its feed
(`feed_id:<feed>`, as its tag): a widget with `dimensions: [traceName]` draws one row per feed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from scoregate.store.records import ItemResult

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from scoregate.catalog.project import Project
    from scoregate.store.record import Manifest

ATTRIBUTE_LIMIT = 200
"""Longest value the SDK keeps in a span attribute (SDK 4 drops longer ones with a log line)."""
TRACE_NAME_DIMENSION = "feed_id"
"""The dimension a trace is named after (`feed_id:<feed>`); an item without it keeps the runner's name."""
INFERRED_KEY = "inferred_input"
"""Item metadata holding what the route inferred for an item without the routing field (title fallback)."""


def routing_fields(project: Project | None, experiment: str) -> list[str]:
    """The input fields that pick a prompt: this experiment's route first, then every other route's field."""
    if project is None:
        return []
    own = project.config.experiments.get(experiment)
    routes = [own] if own is not None else []
    routes += [spec for name, spec in project.config.experiments.items() if name != experiment]
    found = (getattr(getattr(spec, "prompt", None), "by", None) for spec in routes)
    return list(dict.fromkeys(by for by in found if isinstance(by, str)))


def trace_dimensions(project: Project | None, manifest: Manifest, result: ItemResult) -> dict[str, str]:
    """The item's dimensions as short strings: the dataset's `dimensions:` (default: every `feed_*` and
    `*category*` field) and the style its route reads, also with a fixed prompt; a value the route inferred
    for an item without the field (title fallback) counts as the item's own."""
    receipts = manifest.receipts
    ref = project.datasets.get(receipts.dataset_name()) if project is not None else None
    declared = ref.meta.dimensions if ref is not None else None
    inferred = result.metadata.get(INFERRED_KEY)
    known = {**(inferred if isinstance(inferred, dict) else {}), **result.input}
    if declared is None:
        declared = [k for k in result.input if k.startswith("feed_") or "category" in k]
    names = [*routing_fields(project, str(receipts.experiment)), *declared]
    values = {}
    for name in dict.fromkeys(names):
        value = known.get(name)
        if isinstance(value, str | int | float | bool):
            values[name] = str(value)[:ATTRIBUTE_LIMIT]
    return values


def trace_attributes(project: Project | None, manifest: Manifest, run_id: str, result: ItemResult) -> dict[str, Any]:
    """Trace metadata, tags, version and name of one item (`propagate_attributes` keywords): its dimensions and
    the run's experiment, model and prompt version; named after its feed when it has one."""
    receipts = manifest.receipts
    model = receipts.model.name if receipts.model else None
    dims = trace_dimensions(project, manifest, result)
    meta = {
        **dims,
        "scoregate_experiment": str(receipts.experiment),
        "scoregate_run_id": run_id,
        "model": str(model),
        "prompt": result.prompt.rsplit("@", 1)[0],
        "prompt_version": result.prompt,
    }
    tags = [
        f"experiment:{receipts.experiment}",
        f"model:{model}",
        f"prompt:{result.prompt}",
        *(f"{k}:{v}" for k, v in dims.items()),
    ]
    attributes: dict[str, Any] = {
        "metadata": {k: v[:ATTRIBUTE_LIMIT] for k, v in meta.items()},
        "tags": tags,
        "version": result.prompt,
    }
    if TRACE_NAME_DIMENSION in dims:
        attributes["trace_name"] = f"{TRACE_NAME_DIMENSION}:{dims[TRACE_NAME_DIMENSION]}"[:ATTRIBUTE_LIMIT]
    return attributes


EXPERIMENT_DESCRIPTION = "langfuse.experiment.description"
"""Where Langfuse v4's Experiments page reads a run's description: `any()` of it over every span of the
experiment. The SDK runner sets it on its two spans only (it propagates the experiment's id, name and metadata
to the spans below, not its description), so a span the mirror records below them would show an empty one."""


def experiment_description() -> str | None:
    """The experiment description on the current span (the runner's task span carries it), or None."""
    from opentelemetry import trace

    attributes = getattr(trace.get_current_span(), "attributes", None) or {}
    value = attributes.get(EXPERIMENT_DESCRIPTION)
    return value if isinstance(value, str) else None


def describe_current_span(description: str | None) -> None:
    """Give the current span the experiment's description (a span recorded inside an experiment item)."""
    from opentelemetry import trace

    if description:
        trace.get_current_span().set_attribute(EXPERIMENT_DESCRIPTION, description)


@contextmanager
def traced_with(root: Span | None, attributes: dict[str, Any]) -> Iterator[None]:
    """Put trace attributes on the trace's root span, and on the current span and every span opened inside."""
    from langfuse import propagate_attributes
    from opentelemetry import trace

    if root is not None and root.is_recording():
        with trace.use_span(root, end_on_exit=False), propagate_attributes(**attributes):
            pass  # propagate_attributes sets them on the current span: here the root
    with propagate_attributes(**attributes):
        yield
