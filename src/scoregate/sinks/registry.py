"""The sinks scoregate mirrors to: name → `module:factory`, imported only when a mirror needs it.

A tracker is one module with a `RunSink` factory (a class taking a `SinkContext`) and one line here. The
order is the order of the mirrors: MLflow first, so the Langfuse mirror finds the MLflow run id in the run's
links. Nothing here imports a sink: `scoregate --help` and commands that mirror nothing stay fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scoregate.sinks.contract import RunSink, SinkContext

SINKS: dict[str, str] = {
    "mlflow": "scoregate.sinks.mlflow.sink:MlflowSink",
    "langfuse": "scoregate.sinks.langfuse.sink:LangfuseSink",
}


def sink_names() -> list[str]:
    """The registered sinks, in mirror order."""
    return list(SINKS)


def register(name: str, target: str) -> None:
    """Add (or replace) a sink: `target` is `module:factory`, imported when a mirror first needs it."""
    module, _, attr = target.partition(":")
    if not module or not attr:
        raise ValueError(f"sink {name!r}: {target!r} is not `module:factory`")
    SINKS[name] = target


def build_sink(name: str, context: SinkContext) -> RunSink:
    """Import sink `name`'s module and build the sink for `context`."""
    module, _, attr = SINKS[name].partition(":")
    factory = getattr(import_module(module), attr)
    sink: RunSink = factory(context)
    return sink
