"""`scoregate replay EXPERIMENT --production N`: the last N production inputs run through the candidate, the
logged production outputs as their own run, and the pairwise judge between the two.

The candidate is the experiment's prompt as the files have it, on its model: a run like any other of experiment
`<name>-replay` (own run id, report, MLflow, `compare`) over the replay items. The logged side is a run of
`<name>-replay-logged` over the same items with `output_from: expected_output`, the logged output as the item's
`expected_output`, so the file judges score both outputs and `compare` pairs the runs by item id. The pairwise
judge compares them in both orders (`app.pairwise.judge_runs`, A = logged, B = candidate).

Nothing is dropped from the denominator: an item the pairwise judge could not decide (the candidate's call failed,
the judge failed) and a trace that could not be replayed (a mapped field missing) each count as a loss of the
candidate. The verdict is read from the Wilson interval of the candidate's win rate over all of them: `better`
when its low end is above 1/2, `worse` when its high end is below 1/2, else `not worse`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Any

from scoregate.analysis.paired import WinRate, preference_win_rate
from scoregate.app.pairwise import judge_runs
from scoregate.app.replay_items import fetch_replay_items, production_spec, write_items
from scoregate.app.replay_record import Replay, Verdict, write_replay
from scoregate.app.run.one_run import run_one
from scoregate.app.run.run_options import RunOptions
from scoregate.catalog.datasets import DatasetRef
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.prompt_choice import LANGFUSE_SOURCE
from scoregate.tracks.project import load_project


def verdict_of(rate: WinRate) -> Verdict:
    """`better`/`worse` when the CI of the candidate's win rate lies wholly above/below 1/2, else `not worse`."""
    if rate.ci_low is not None and rate.ci_low > 0.5:
        return "better"
    if rate.ci_high is not None and rate.ci_high < 0.5:
        return "worse"
    return "not worse"


def _with_dataset(project: Project, experiment: str, name: str, path: Path, **changes: Any) -> tuple[Project, str]:
    """The project with one more experiment, `experiment` on the dataset file at `path` (the replay items)."""
    source = project.datasets[project.config.experiments[experiment].dataset]
    spec = project.config.experiments[experiment].model_copy(update={"dataset": name, **changes})
    run_name = experiment + ("-replay-logged" if changes else "-replay")
    config = project.config.model_copy(update={"experiments": {**project.config.experiments, run_name: spec}})
    datasets = {**project.datasets, name: DatasetRef(name, path, source.meta, source.meta_path)}
    return replace(project, config=config, datasets=datasets), run_name


def replay_tally(outcomes: dict[str, str | None], skipped: int) -> tuple[list[str], dict[str, int]]:
    """Every item's outcome for the win rate: an undecided item or a skipped trace is a loss ("A")."""
    counted: list[str] = []
    failed: dict[str, int] = {}
    for outcome in outcomes.values():
        counted.append(outcome or "A")
        if outcome is None:
            failed["not judged"] = failed.get("not judged", 0) + 1
    if skipped:
        failed["not replayed"] = skipped
        counted += ["A"] * skipped
    return counted, failed


def replay_experiment(
    root: Path,
    experiment: str,
    *,
    production: int,
    prompt_version: int | None = None,
    judge_model: str | None = None,
    use_cache: bool = True,
    confidence: float = 0.95,
    now: dt.datetime | None = None,
) -> Replay:
    """Replay the last `production` production inputs of `experiment` through its candidate (the prompt file, or
    Langfuse's `prompt_version`); return the tally and the verdict (also written as `replay.json` into the candidate
    run)."""
    if production < 1:
        raise ScoregateError(f"--production {production}: give the number of production inputs to replay (1 or more)")
    project = load_project(root)
    spec = production_spec(project, experiment)
    moment = now or dt.datetime.now(dt.UTC)
    found = fetch_replay_items(project, experiment, spec, production, moment)
    if not found.candidate:
        why = "; ".join(f"{t}: {r}" for t, r in found.skipped[:3]) or "no production trace in the window"
        raise ScoregateError(
            f"nothing to replay for {experiment!r} ({found.prompt}): {why}",
            hint="send traffic through the production prompt, or widen `production:` filter.window",
        )
    folder = project.root / ".scoregate" / "replay" / experiment / moment.strftime("%Y%m%dT%H%M%S%fZ")
    write_items(folder / "candidate.jsonl", found.candidate)
    write_items(folder / "logged.jsonl", found.logged)
    source = (
        RunOptions.PromptSource(source="local")  # the candidate is the prompt as the files have it
        if prompt_version is None
        else RunOptions.PromptSource(source=LANGFUSE_SOURCE, version=prompt_version)
    )
    quiet = RunOptions(prompts=source, use_cache=use_cache, canary_on_change=False)
    candidate_project, candidate_name = _with_dataset(
        project, experiment, f"replay-{experiment}", folder / "candidate.jsonl"
    )
    candidate = run_one(candidate_project, candidate_name, quiet)
    logged_project, logged_name = _with_dataset(
        project, experiment, f"replay-{experiment}-logged", folder / "logged.jsonl", output_from="expected_output"
    )
    logged = run_one(logged_project, logged_name, quiet)
    preference = judge_runs(
        project, logged.store, candidate.store, model=judge_model, use_cache=use_cache, confidence=confidence
    )
    outcomes: dict[str, str | None] = {item["id"]: None for item in found.candidate}
    outcomes.update({pair.item_id: pair.outcome for pair in preference.pairs if pair.item_id in outcomes})
    counted, failed = replay_tally(outcomes, len(found.skipped))
    rate = preference_win_rate(counted, confidence=confidence)
    prompts = sorted({r.prompt for r in candidate.store.iter_results()})
    result = Replay(
        experiment=experiment,
        prompt=found.prompt,
        candidate_prompt=", ".join(prompts),
        candidate_run=candidate.run_id,
        logged_run=logged.run_id,
        items=rate.n,
        wins=rate.b_wins,
        losses=rate.a_wins,
        ties=rate.ties,
        failed=failed,
        win_rate=rate.win_rate,
        ci_low=rate.ci_low,
        ci_high=rate.ci_high,
        confidence=confidence,
        verdict=verdict_of(rate),
        skipped=found.skipped,
        redacted=found.redacted,
        mirrors={run.run_id: sorted(run.mirrors) for run in (candidate, logged)},
        mirror_errors={
            f"{run.run_id} {sink}": error for run in (candidate, logged) for sink, error in run.mirror_errors.items()
        },
    )
    write_replay(candidate.store.directory, result)
    return result
