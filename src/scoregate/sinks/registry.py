"""The sinks scoregate mirrors to: name → `module:factory`, imported only when a mirror needs it.

A tracker is one module with a `RunSink` factory (a class taking a `SinkContext`) and one line here, or a plug-in:
an entry point in the group `scoregate.sinks` of another installed package (docs/extending/plugins.md). The order
is the order of the mirrors: MLflow first, so the Langfuse mirror finds the MLflow run id in the run's links; the
plug-ins follow, by name. Nothing here imports a built-in sink: `scoregate --help` and commands that mirror nothing
stay fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from scoregate.support.registry import Plugin, Registry

if TYPE_CHECKING:
    from scoregate.sinks.contract import RunSink, SinkContext

SINKS: dict[str, str] = {
    "mlflow": "scoregate.sinks.mlflow.sink:MlflowSink",
    "langfuse": "scoregate.sinks.langfuse.sink:LangfuseSink",
}
SINK_MEMBERS = ("configured", "mirror", "mark_invalid", "forget", "link")
"""What a sink's class must define (`RunSink` in scoregate/sinks/contract.py)."""


def _adopt(loaded: object, plugin: Plugin) -> str:
    """A plug-in sink's `module:factory`, once its class is found to define every member of `RunSink`."""
    if not callable(loaded):
        raise ValueError(f"is not a class taking a SinkContext: {type(loaded).__name__}")
    missing = [member for member in SINK_MEMBERS if not callable(getattr(loaded, member, None))]
    if missing:
        raise ValueError(
            f"does not define {', '.join(missing)} (a sink defines {', '.join(SINK_MEMBERS)}: "
            "scoregate/sinks/contract.py)"
        )
    return plugin.value


REGISTRY: Registry[str] = Registry("scoregate.sinks", "sink", lambda: SINKS, _adopt)
"""The built-in sinks and the plug-ins of the entry-point group `scoregate.sinks`."""


def sink_names() -> list[str]:
    """The registered sinks, in mirror order: the built-ins, then the plug-ins."""
    return REGISTRY.names()


def register(name: str, target: str) -> None:
    """Add (or replace) a sink: `target` is `module:factory`, imported when a mirror first needs it."""
    module, _, attr = target.partition(":")
    if not module or not attr:
        raise ValueError(f"sink {name!r}: {target!r} is not `module:factory`")
    SINKS[name] = target


def build_sink(name: str, context: SinkContext) -> RunSink:
    """Import sink `name`'s module and build the sink for `context`."""
    module, _, attr = REGISTRY[name].partition(":")
    factory = getattr(import_module(module), attr)
    sink: RunSink = factory(context)
    return sink
