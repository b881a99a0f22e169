"""`scoregate plan EXPERIMENT --detect D [--power P]`: the items × repeats that detect D, and what they cost."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from scoregate.cli.label_options import HumanKeyOption, JudgeKeyOption, PassAtOption
from scoregate.cli.layout import print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

console = lazy_console()
LABEL = 14


def _row(label: str, text: str) -> None:
    print_wrapped(console, text, first=f"  {label:<{LABEL}}", indent=" " * (LABEL + 2))


def _interval(figure: dict[str, float] | None, unit: str) -> str:
    if figure is None:
        return ""
    return f"${figure['expected']:.2f} [${figure['low']:.2f}, ${figure['high']:.2f}]"


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value < 120 else f"{value / 60:.1f} min"


def _repeats(r: int) -> str:
    return f"{r} repeat" + ("s" if r > 1 else "")


def print_plan(data: dict[str, Any]) -> None:
    """Print a plan: per metric, its variance, the items needed per repeats with their cost, what the dataset does."""
    print_wrapped(
        console,
        f"plan {data['experiment']}: detect a difference of {data['detect']:g} with power {data['power']:g} "
        f"(two-sided test at 5%), from run {data['run_id']}",
    )
    for metric in data["metrics"]:
        variance = metric["variance"]
        gate = f" (gate {metric['gate']})" if metric["gate"] else ""
        print_wrapped(console, f"{metric['metric']}{gate}")
        what = "a per-item value" if metric.get("one_run") else "a per-item difference"
        spread = f"{what} varies by sd {variance['between'] ** 0.5:.3g}"
        if variance["within"] is not None:
            spread += f", plus sd {variance['within'] ** 0.5:.3g} of repeat noise (shrinks with repeats)"
        _row("variance", f"{spread}; {variance['source']}")
        for note in metric["notes"]:
            _row("note", note)
        for row in metric["rows"]:
            if row["items"] is None:
                _row("needed", f"{_repeats(row['repeats'])}: not reachable: {row['reason']}")
                continue
            cost = _interval(row["cost_usd"], "usd") or str(row["cost_reason"])
            wall = _seconds(row["wall_s"]["expected"]) if row["wall_s"] else ""
            more = f"{row['items']:,} items × {_repeats(row['repeats'])}: cost {cost}" + (
                f", about {wall}" if wall else ""
            )
            if row["items"] > metric["dataset_items"]:
                more += f" (the dataset has {metric['dataset_items']:,})"
            _row("needed", more)
        can = ", ".join(
            f"{v:.3g} at {_repeats(int(r))}" if v is not None else f"no difference at {_repeats(int(r))}"
            for r, v in metric["detectable"].items()
        )
        _row("this dataset", f"{metric['dataset_items']:,} items detect {can}")


def print_label_plan(data: dict[str, Any]) -> None:
    """Print a label plan: the judged classes and their labels, the corrected rate now, the split, the items."""
    pass_at = f" --pass-at {data['pass_at']:g}" if data.get("pass_at") is not None else ""
    share = data["judged_pass_share"]
    labelled = data["labelled"]
    print_wrapped(
        console,
        f"labels for {data['judge_key']} (judge) vs {data['human_key']} (human), run {data['run_id']}: "
        f"{data['items']} items, {share:.0%} judged pass; labelled: {labelled['judged pass']} judged pass, "
        f"{labelled['judged fail']} judged fail",
    )
    now = data["corrected"]
    if now["value"] is None:
        _row("corrected", f"none: {now['reason']}")
    else:
        _row("corrected", f"pass rate {now['value']:.3f} [{now['ci_low']:.3f}, {now['ci_high']:.3f}] (95%)")
    plan = data["plan"]
    more = plan["judged_pass"] + plan["judged_fail"]
    _row("next labels", f"{plan['judged_pass']} judged pass, {plan['judged_fail']} judged fail (of {more})")
    before = "none" if plan["half_width_now"] is None else f"±{plan['half_width_now']:.3f}"
    _row(
        "interval",
        f"{before} now (planned shares), ±{plan['half_width_after']:.3f} after; ±{plan['half_width_random']:.3f} "
        "with as many labels drawn without looking at the verdict",
    )
    for name, items in data["chosen"].items():
        if items:
            _row(name, ", ".join(items))
    print_wrapped(
        console,
        f"send them: `scoregate annotate queue {data['run_id']} --labels {more} --judge-key {data['judge_key']} "
        f"--human-key {data['human_key']}{pass_at}`",
    )


def plan(
    experiment: Annotated[str, typer.Argument(help="The experiment to plan (from scoregate.yaml).")],
    detect: Annotated[
        float | None, typer.Option("--detect", help="The difference to detect, in the metric's units.")
    ] = None,
    power: Annotated[float, typer.Option("--power", help="The chance to detect it when it is there.")] = 0.8,
    metric: Annotated[
        str | None, typer.Option("--metric", help="A score key; default: every score a gate of the experiment names.")
    ] = None,
    labels: Annotated[
        int | None, typer.Option("--labels", help="Instead: plan this many more human labels for a pass/fail judge.")
    ] = None,
    judge_key: JudgeKeyOption = None,
    human_key: HumanKeyOption = None,
    pass_at: PassAtOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
    project: ProjectOption = None,
) -> None:
    """Say how many items × repeats detect a difference, what that costs, and what the dataset detects."""
    from scoregate.errors import UsageError

    if (detect is None) == (labels is None):
        raise UsageError("give --detect D (items to detect a difference) or --labels N (human labels to plan)")
    if labels is not None:
        from scoregate.app import LabelRequest, plan_stored_labels

        request = LabelRequest(labels, judge_key or "", human_key or "", pass_at)
        planned = plan_stored_labels(project_root(project), experiment, request)
        if as_json:
            typer.echo(json.dumps(planned.to_dict(), indent=2))
            return
        print_label_plan(planned.to_dict())
        return
    from scoregate.app import plan_stored_experiment

    assert detect is not None
    found = plan_stored_experiment(project_root(project), experiment, detect=detect, power=power, metric=metric)
    if as_json:
        typer.echo(json.dumps(found.to_dict(), indent=2))
        return
    print_plan(found.to_dict())
