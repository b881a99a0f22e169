"""The flags of `scoregate run`, each declared once with its help (the command's signature names them), and the
helpers that turn them into a run's option groups (`--no-mirror` and its aliases: `cli/mirror_flags.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from scoregate.errors import UsageError

ExperimentArgument = Annotated[str | None, typer.Argument(help="Experiment name from scoregate.yaml.")]

Limit = Annotated[int | None, typer.Option(min=1, help="Run only the first N items.")]

Concurrency = Annotated[int | None, typer.Option(min=1, max=1000, help="Items in flight at once.")]

Model = Annotated[str | None, typer.Option(help="Model name from scoregate.yaml to use instead.")]

JudgeModel = Annotated[str | None, typer.Option("--judge-model", help="Model name for judges that name none.")]

Models = Annotated[str | None, typer.Option(help="Comma-separated model names: one run per model on the same items.")]

Resume = Annotated[str | None, typer.Option(help="Resume an interrupted run by its id.")]

RetryErrors = Annotated[
    bool, typer.Option("--retry-errors", help="With --resume: run the items that failed again (newest wins).")
]

Quarantine = Annotated[
    bool,
    typer.Option(
        "--quarantine", help="With --resume: move damaged lines of results.jsonl aside (kept) and redo their items."
    ),
]

NoCache = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")]

FailOnGates = Annotated[bool, typer.Option("--fail-on-gates", help="Exit with code 3 unless every gate passes.")]

NoMlflow = Annotated[bool, typer.Option("--no-mlflow", help="Do not mirror the run to MLflow (= --no-mirror mlflow).")]

NoLangfuse = Annotated[
    bool,
    typer.Option(
        "--no-langfuse",
        help="No Langfuse: local prompt files and --no-mirror langfuse (keys may stay set).",
    ),
]

PromptSource = Annotated[
    str,
    typer.Option(help="Where prompts come from: langfuse, local (prompts/*.yaml) or auto (Langfuse if set)."),
]

PromptLabel = Annotated[
    str | None,
    typer.Option(help="Run the Langfuse prompt version with this label (default: candidate, else production)."),
]

PromptVersion = Annotated[int | None, typer.Option(min=1, help="Run this Langfuse prompt version.")]

AsJson = Annotated[
    bool, typer.Option("--json", help="Print the run id and summary as JSON on stdout (the rest on stderr).")
]

EvalRows = Annotated[
    bool, typer.Option("--eval-rows", help="Also write each item as an MLflow evaluation row (~57 ms/item).")
]

Markdown = Annotated[
    str | None,
    typer.Option(
        "--markdown",
        metavar="FILE",
        help="Also write the run's evidence as Markdown to FILE (a CI job summary, a PR comment).",
    ),
]

NoReport = Annotated[
    bool,
    typer.Option("--no-report", help="Do not write runs/<id>/report.html (`scoregate report RUN` can)."),
]

Repeat = Annotated[
    int,
    typer.Option(min=1, max=100, help="Run each item K times (repeats 2..K bypass the cache) and report consistency."),
]

DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Forecast the calls, tokens, cost and wall time; call no model.")
]

BudgetUsd = Annotated[
    float | None, typer.Option(help="Refuse to start if the forecast may cost more (USD); stop at it.")
]

BudgetMinutes = Annotated[
    float | None, typer.Option(help="Refuse to start if the forecast may take longer (minutes); stop at it.")
]

Shard = Annotated[
    str | None,
    typer.Option(help="Run one shard: I/N (0-based) or auto (JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID)."),
]

Shards = Annotated[int | None, typer.Option(min=1, help="With --shard auto: the shard count (else SCOREGATE_SHARDS).")]

RunId = Annotated[
    str | None,
    typer.Option(
        "--run-id",
        help="The new run's id (letters, digits, _ - .), e.g. a CI job's; an existing one is refused (resume it "
        "with --resume). With --shard: the id all shards share (default: derived).",
    ),
]

Group = Annotated[
    str | None, typer.Option(help="With --shard: a name that sets one sharded run apart, e.g. the CI run id.")
]

StopEarly = Annotated[
    bool,
    typer.Option(
        "--stop-early",
        help="Run the items in a seeded order; stop once the first gate's question against --against is settled.",
    ),
]

Against = Annotated[str | None, typer.Option(help="With --stop-early: the reference run's id.")]

MaxItems = Annotated[
    int | None, typer.Option(min=1, help="With --stop-early: stop, inconclusive, after N paired items.")
]

MaxCost = Annotated[float | None, typer.Option(min=0, help="With --stop-early: stop, inconclusive, once USD is spent.")]

StopBatch = Annotated[int | None, typer.Option(min=1, help="With --stop-early: items between two looks (default 10).")]

Heartbeat = Annotated[
    float,
    typer.Option(
        min=0.1,
        envvar="SCOREGATE_HEARTBEAT_S",
        help="Without a terminal (CI logs): at most one progress line every N seconds (and the last one), and a "
        "line at least every N seconds while the run waits.",
    ),
]


def prompts_from(source: str, no_langfuse: bool) -> str:
    """`--no-langfuse` is `--no-mirror langfuse` that also reads the local prompt files (unless a source is named)."""
    return "local" if no_langfuse and source == "auto" else source


@contextmanager
def usage_as_bad_parameter() -> Iterator[None]:
    """Say a contradiction the library found in the flags as Typer says a bad flag (exit 2)."""
    try:
        yield
    except UsageError as exc:
        raise typer.BadParameter(exc.message, param_hint=exc.option) from exc
