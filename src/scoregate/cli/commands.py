"""The composition root of the `scoregate` command: every command, the registry that holds them, and the Typer app.

A command is one line of `BUILT_IN` (where it lives and its one-line help), imported only when it runs. The
registry `COMMANDS` is those lines, then each track's commands (`tracks/<name>/commands.py`, or the `commands.py`
beside a plug-in track's module), then the plug-ins of the entry-point group `scoregate.commands`; a plug-in that
takes a built-in's name is refused. A new command is three files (its module in `cli/`, its use case in `app/`,
its test) and one line here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated

import typer
from typer._click import Context, HelpFormatter

from scoregate.app import installed_plugins, track_commands
from scoregate.cli.lazy_group import LazyCommand, LazyTyperGroup
from scoregate.cli.options import PROJECT_HELP, set_global_project
from scoregate.support.registry import Plugin, Registry


def _cmd(module: str, attribute: str, help: str) -> LazyCommand:
    return LazyCommand(f"scoregate.cli.{module}", attribute, help)


BUILT_IN: dict[str, LazyCommand] = {
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
    "sync": _cmd(
        "sync_cmd",
        "sync",
        "Mirror a stored run to its trackers again; updates each mirror, never a duplicate.",
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
    "cascade": _cmd(
        "cascade_cmd", "cascade", "Choose a cascade judge's first-judge threshold with a guaranteed human agreement."
    ),
    "plan": _cmd(
        "plan_cmd",
        "plan",
        "Say how many items × repeats detect a difference, what that costs, and what the dataset detects.",
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
    "rollout": _cmd("rollout_cmd", "app", "Canary rollouts: start one, watch its live scores to a decision, status."),
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
    "judges": _cmd("judges_cmd", "judges_app", "Judges in Langfuse: evaluator files as versioned evaluators."),
    "traces": _cmd("traces_cmd", "traces_app", "Production traces in Langfuse: scored by the file judges."),
    "coverage": _cmd(
        "coverage_cmd",
        "coverage",
        "Measure the share of production traffic the dataset covers; group the uncovered traffic into clusters.",
    ),
    "harvest": _cmd(
        "harvest_cmd",
        "harvest",
        "Propose dataset items from production traces (redacted, with provenance) as a diff; --apply writes it.",
    ),
    "replay": _cmd(
        "replay_cmd",
        "replay",
        "Run the last N production inputs through the candidate; judge it against the logged outputs.",
    ),
}
"""The built-in commands, one line each, in help order: where each lives (a module of `cli/`) and its one-line help
(tests check it against the docstring). The tracks' commands come after `hardcases`."""


def _with_track_commands(commands: Mapping[str, LazyCommand], *, after: str) -> dict[str, LazyCommand]:
    """`commands` with every track's commands inserted after the command `after`; a track cannot take the name of a
    built-in command."""
    names = list(commands)
    at = names.index(after) + 1
    tracks = {
        name: LazyCommand(module, attribute, help)
        for name, (module, attribute, help) in track_commands().items()
        if name not in commands
    }
    return {name: commands.get(name) or tracks[name] for name in [*names[:at], *tracks, *names[at:]]}


def _built_ins() -> dict[str, LazyCommand]:
    return _with_track_commands(BUILT_IN, after="hardcases")


def _adopt_command(loaded: object, plugin: Plugin) -> LazyCommand:
    """Where a plug-in command lives and its one-line help: a function with a docstring, or a Typer app with a
    help."""
    help = getattr(getattr(loaded, "info", None), "help", None)
    if not isinstance(help, str):
        help = getattr(loaded, "__doc__", None) if callable(loaded) else None
    line = (help or "").strip().splitlines()[0] if (help or "").strip() else ""
    if not line:
        raise ValueError("has no help: give the function a docstring, or the Typer app a help=")
    module, _, attribute = plugin.value.partition(":")
    if not attribute:
        raise ValueError("names a module, not a function or a Typer app: write `module:attribute`")
    return LazyCommand(module.strip(), attribute.strip(), line)


COMMANDS: Registry[LazyCommand] = Registry("scoregate.commands", "command", _built_ins, _adopt_command)
"""Every command in help order: the built-ins, the tracks', then the plug-ins of `scoregate.commands`."""


class _Commands(Mapping[str, LazyCommand]):
    """The registry's commands as the group reads them: afresh on each use (a test may add one line)."""

    def __getitem__(self, name: str) -> LazyCommand:
        return COMMANDS.entries()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS.entries())

    def __len__(self) -> int:
        return len(COMMANDS.entries())


class _ScoregateGroup(LazyTyperGroup):
    lazy_commands = _Commands()

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        """After the commands, the packages that add plug-ins and what each adds (read, not loaded)."""
        super().format_epilog(ctx, formatter)
        lines = installed_plugins()
        if lines:
            with formatter.section("Plug-ins"):
                formatter.write_dl([(package, added) for package, _, added in (line.partition(": ") for line in lines)])


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
