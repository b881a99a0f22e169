"""The `scoregate` command: thin Typer commands over the library, one error handler, distinct exit codes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from typer._click import Context, HelpFormatter

from scoregate.app import installed_plugins, plugin_commands, track_commands
from scoregate.cli.lazy_group import LazyCommand, LazyTyperGroup
from scoregate.cli.options import PROJECT_HELP, set_global_project
from scoregate.errors import ExitCode, ScoregateError
from scoregate.support.redaction import redact


def _cmd(module: str, attribute: str, help: str) -> LazyCommand:
    return LazyCommand(f"scoregate.cli.{module}", attribute, help)


def _with_track_commands(commands: dict[str, LazyCommand], *, after: str) -> dict[str, LazyCommand]:
    """`commands` with every track's commands (`tracks/<name>/commands.py`) inserted after the command `after`;
    a track cannot take the name of a built-in command."""
    names = list(commands)
    at = names.index(after) + 1
    tracks = {
        name: LazyCommand(module, attribute, help)
        for name, (module, attribute, help) in track_commands().items()
        if name not in commands
    }
    return {name: commands.get(name) or tracks[name] for name in [*names[:at], *tracks, *names[at:]]}


# Every command, in help order: where it lives and its one-line help (tests check it against the docstring).
COMMANDS: dict[str, LazyCommand] = {
    "validate": _cmd(
        "run_cmd",
        "validate_files_command",
        "Check every dataset, prompt, evaluator and experiment; no model is called.",
    ),
    "run": _cmd(
        "run_cmd",
        "run",
        "Run an experiment (or resume one), print scores and gates, mirror to MLflow; no name: list experiments.",
    ),
    "merge": _cmd(
        "merge_cmd",
        "merge",
        "Merge the shards of a run into one run: check them, summarise, gate, report, mirror; idempotent.",
    ),
    "mlflow-sync": _cmd(
        "sync_cmd",
        "mlflow_sync",
        "Mirror a stored run to MLflow again; updates the same MLflow run, never a duplicate.",
    ),
    "rank": _cmd(
        "rank_cmd",
        "rank",
        "Rank runs: paired tests, win-rate matrix, Pareto fronts (accuracy vs latency and cost), best by metric.",
    ),
    "calibrate": _cmd(
        "calibrate_cmd",
        "calibrate_command",
        "Measure how well a judge agrees with human ratings: correlations, kappa, agreement, MAE, with 95% CIs.",
    ),
    "compare": _cmd(
        "compare_cmd",
        "compare",
        "Compare two runs item by item (Δ with CI, Wilcoxon, t-test, dz, Holm, verdicts), or rank several.",
    ),
    "diff": _cmd(
        "diff_cmd",
        "diff",
        "Show the items two runs share, sorted by the largest change of a score, with both outputs and a word diff.",
    ),
    "report": _cmd(
        "report_cmd",
        "report",
        "Write an HTML report of a run, a comparison of two runs, or a ranking of several; print its path.",
    ),
    "leaderboard": _cmd(
        "leaderboard_cmd",
        "leaderboard",
        "Rank models and prompt versions over all valid runs; write runs/leaderboard.json.",
    ),
    "langfuse-sync": _cmd(
        "sync_cmd",
        "langfuse_sync",
        "Mirror a stored run to Langfuse as an experiment; sends only what Langfuse has not confirmed yet.",
    ),
    "promote": _cmd(
        "promote_cmd",
        "promote_command",
        "Move a label to a prompt version whose gates passed (or roll it back); audited in promotions.jsonl.",
    ),
    "promotions": _cmd(
        "promote_cmd", "promotions_command", "List the promotion history (promotions.jsonl), oldest first."
    ),
    "hardcases": _cmd("hardcases_cmd", "app", "Keep known failures as a dataset every experiment can include."),
    "runs": _cmd("runs_cmd", "app", "Inspect the local run store (runs/)."),
    "items": _cmd("items_cmd", "app", "Items across the runs of an experiment."),
    "model": _cmd("model_cmd", "app", "The embedded local model (llama.cpp serving SmolLM2-135M-Instruct)."),
    "cache": _cmd("cache_cmd", "app", "The response cache (.scoregate/cache.sqlite)."),
    "langfuse": _cmd(
        "langfuse_cmd", "langfuse_app", "The Langfuse connection (LANGFUSE_PUBLIC_KEY, _SECRET_KEY, _HOST)."
    ),
    "datasets": _cmd("langfuse_cmd", "datasets_app", "Datasets in Langfuse: sync datasets/ as plan and apply."),
    "prompts": _cmd("langfuse_cmd", "prompts_app", "Prompts in Langfuse: a version per real change."),
    "scores": _cmd("langfuse_cmd", "scores_app", "Human ratings and online feedback as Langfuse scores."),
    "dashboards": _cmd("langfuse_cmd", "dashboards_app", "Langfuse dashboards from dashboards/*.yaml."),
    "annotate": _cmd("langfuse_cmd", "annotate_app", "Human rating in Langfuse's annotation queues."),
}
COMMANDS = _with_track_commands(COMMANDS, after="hardcases")


class _ScoregateGroup(LazyTyperGroup):
    lazy_commands = COMMANDS

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        """After the commands, the packages that add plug-ins and what each adds (read, not loaded)."""
        super().format_epilog(ctx, formatter)
        lines = installed_plugins()
        if lines:
            with formatter.section("Plug-ins"):
                formatter.write_dl([(package, added) for package, _, added in (line.partition(": ") for line in lines)])


def _with_plugin_commands() -> None:
    """Add the commands of installed plug-in packages after the built-in ones (a PluginError when one is broken)."""
    plugins = plugin_commands(list(COMMANDS))
    if plugins:
        _ScoregateGroup.lazy_commands = {**COMMANDS, **{name: LazyCommand(*entry) for name, entry in plugins.items()}}


app = typer.Typer(
    cls=_ScoregateGroup,
    name="scoregate",
    help="Decide, with evidence, whether a new prompt or model beats production.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from scoregate import __version__

        typer.echo(f"scoregate {__version__}")
        raise typer.Exit()


@app.callback()
def _main_options(
    ctx: typer.Context,
    project: Annotated[Path | None, typer.Option("--project", "-C", help=PROJECT_HELP)] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Decide, with evidence, whether a new prompt or model beats production."""
    set_global_project(project)
    if ctx.invoked_subcommand is not None and not ctx.resilient_parsing:
        from scoregate.app import check_plugins

        check_plugins()  # a broken or duplicate plug-in package is named before any command starts
    if ctx.invoked_subcommand != "run":  # a run keeps the collector off until its first request is out
        from scoregate.support.start_gc import release_collector

        release_collector()


def _debug() -> bool:
    return os.environ.get("SCOREGATE_DEBUG", "").strip().lower() not in ("", "0", "false", "no")


def os_error_text(exc: OSError) -> str:
    """One line for an OSError: the path(s), what the system said, and what to do for a full or read-only disk."""
    import errno

    paths = " → ".join(str(p) for p in (exc.filename, exc.filename2) if p is not None)
    said = exc.strerror or str(exc) or type(exc).__name__
    text = f"{paths}: {said}" if paths else said
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return f"{text}\n  → free disk space, then run the command again"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{text}\n  → make it writable (or readable), then run the command again"
    return text


def main() -> None:
    """Run the CLI; print user errors without a traceback (SCOREGATE_DEBUG=1 re-raises)."""
    import atexit
    import gc

    # At exit the interpreter collects every object still alive, pydantic's validators and numpy's included: ~0.09 s
    # after a 2,000-item run. Frozen, they are left to the system (the standard streams are flushed all the same;
    # scoregate closes the files it writes, so none waits on a collection to be flushed).
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    from scoregate.support.start_gc import end_collector_hold, hold_collector

    hold_collector()  # until a run's first request is out; any other command turns it back on as it starts
    from scoregate.cli.layout import print_wrapped
    from scoregate.support.console import lazy_console

    err = lazy_console(stderr=True)
    try:
        _with_plugin_commands()
        code = app(standalone_mode=False)
    except ScoregateError as exc:
        if _debug():
            raise
        print_wrapped(err, redact(exc.render()), first="error: ", first_style="bold red")
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        err.print("[bold red]interrupted[/]")
        sys.exit(int(ExitCode.INTERRUPTED))
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(int(ExitCode.INTERRUPTED))
    except OSError as exc:  # a file or the disk failed where no command said which: name the path, no traceback
        if _debug():
            raise
        print_wrapped(err, redact(os_error_text(exc)), first="error: ", first_style="bold red")
        sys.exit(int(ExitCode.ERROR))
    except Exception as exc:  # usage errors arrive here in non-standalone mode
        import click

        # Newer typer vendors click: its usage errors are `typer.TyperException`s, not `click.ClickException`s.
        usage_errors = (click.ClickException, getattr(typer, "TyperException", click.ClickException))
        show = getattr(exc, "show", None)
        if isinstance(exc, usage_errors) and callable(show):
            show()
            sys.exit(int(getattr(exc, "exit_code", ExitCode.USAGE)))
        raise
    finally:  # the collector as the caller had it (a run released it at its first request; an error, before)
        end_collector_hold()
    if isinstance(code, int) and code:  # without standalone mode, typer returns a `typer.Exit` code instead
        sys.exit(code)
