"""`scoregate cascade EVALUATOR --run RUN`: a cascade judge's first-judge threshold, with its guarantee and savings."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from scoregate.cli.layout import print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

console = lazy_console()
LABEL = 14


def _row(label: str, text: str) -> None:
    print_wrapped(console, text, first=f"  {label:<{LABEL}}", indent=" " * (LABEL + 2))


def _money(value: float) -> str:
    return f"${value:.4f}"


def print_cascade(data: dict[str, Any]) -> None:
    """Print a cascade calibration: the guarantee, the threshold and what it keeps, agreement, cost, the tests."""
    choice, cost = data["choice"], data["cost"]
    print_wrapped(
        console,
        f"{data['evaluator']}: first judge {data['first_model']}, strong judge {data['strong_model']}; agreement = "
        f"|answer - {data['human_key']}| <= {data['tolerance']:g}; {choice['labels']} labelled items from "
        + ", ".join(data["runs"]),
    )
    for reason, count in data["excluded"].items():
        _row("left out", f"{count}: {reason}")
    _row("guarantee", choice["guarantee"])
    if choice["threshold"] is None:
        _row("threshold", f"none: {choice['reason']}")
    else:
        _row(
            "threshold",
            f"confidence >= {choice['threshold']:g}: the first judge keeps {choice['kept']} of {choice['labels']} "
            f"items ({choice['share_kept']:.0%}), which agree {choice['kept_agreement']:.3f}",
        )
    agree = [
        f"first judge {data['first_agreement']:.3f} on every labelled item"
        if data["first_agreement"] is not None
        else "",
        f"strong judge {data['strong_agreement']:.3f}" if data["strong_agreement"] is not None else "",
    ]
    _row("agreement", "; ".join(a for a in agree if a) or "none measured")
    if choice["threshold"] is None:
        spent = f"; the first judge's calls cost {_money(cost['first_cost'])}" if cost["first_cost"] is not None else ""
        _row("cost saved", f"none: without a threshold nothing is kept{spent}")
    elif cost["saved"] is None:
        _row("cost saved", f"unknown: {cost['reason']}")
    elif cost["saved"] < 0:
        spared = cost["strong_per_item"] * choice["kept"]
        _row(
            "cost saved",
            f"none: the first judge's calls ({_money(cost['first_cost'])}) cost more than the strong calls they "
            f"spared ({_money(spared)})",
        )
    else:
        alone = cost["strong_per_item"] * cost["items"]
        _row(
            "cost saved",
            f"{_money(cost['saved'])} of {_money(alone)} the strong judge alone costs on these {cost['items']} items "
            f"({cost['saved_share']:.0%}; first judge {_money(cost['first_cost'])})",
        )
    for test in choice["tested"]:
        verdict = "holds" if test["p_value"] <= choice["delta"] else "not shown: the sequence stops"
        p = "p < 0.0001" if test["p_value"] < 0.0001 else f"p = {test['p_value']:.4f}"
        shown = f"{test['agreed']} of {test['kept']} agree, {p}"
        _row("tested", f">= {test['threshold']:g}: {shown} ({verdict})")
    if data["saved_to"]:
        print_wrapped(console, data["saved_to"], first="saved ", indent="  ")


def cascade(
    evaluator: Annotated[str, typer.Argument(help="A judge file with `cascade:` (its evaluator name).")],
    run: Annotated[
        list[str], typer.Option("--run", help="A stored run of the judge over human-labelled items (repeatable).")
    ],
    human_key: Annotated[
        str | None,
        typer.Option("--human-key", help="The human rating (human_<f> or an imported key); default: the canary's."),
    ] = None,
    save: Annotated[
        bool, typer.Option("--save", help="Bind the threshold to the judge: every later run of it uses it.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the calibration as JSON.")] = False,
    project: ProjectOption = None,
) -> None:
    """Choose a cascade judge's first-judge threshold with a guaranteed human agreement."""
    from scoregate.app import calibrate_stored_cascade

    found = calibrate_stored_cascade(project_root(project), evaluator, run, human_key=human_key, save=save)
    if as_json:
        typer.echo(json.dumps(found.to_dict(), indent=2))
        return
    print_cascade(found.to_dict())
