"""The run as a list of steps: start reading here.

A run goes start steps → items → finish steps (summary, report, telemetry, post-run steps, mirrors):

1. the way, chosen once per run by `run_way.choose_way`: a whole run (`WholeRun`) or one shard of one (`ShardRun`).
   It opens the run (a resumed run's or shard's store, whose lock `one_run.run_one` then takes), says when a resumed
   one has nothing to run (it only mirrors), creates a new run's store and picks how its items run;
2. `START_STEPS`, in order, each taking the `StartingRun` and adding to it: the sinks' checks, the prompts, the
   plan, a stop-early plan, the budget gate, the model caller (a resume whose receipts changed is refused), the
   models' one-token check, the time budget's floor, a cascade judge's threshold, the store. A step refuses the run
   by raising; every step before `models_check_step` spends no model request, and no run is stored before
   `store_step`;
3. items: one of three ways, from the run's way (`run_way.choose_items`): one shard's items, a stop-early run's
   batches, or every item (each repeat). A shard then ends at `shards.finish_shard` (`scoregate merge` summarises);
4. `FINISH_STEPS`, in order, for a whole run: each takes the `FinishedRun` and adds to its outcome;
5. among them, the post-run steps (`POST_RUN_STEPS`): after the summary and the report, before the mirrors, each
   receiving the finished run. `run_experiment` hands them to the run; a canary's own runs get none.

A new feature before a run's items is one module with one `StartStep` function, plus one line in `START_STEPS`
(before `models_check_step` when it may refuse the run unspent); after a run, one module with one `PostRunStep`
function, plus one line in `POST_RUN_STEPS`.
"""

from __future__ import annotations

from scoregate.app.run.canary_step import judge_canary
from scoregate.app.run.cascade_report import cascade_report
from scoregate.app.run.finish_steps import FINISH_STEPS, finish_run
from scoregate.app.run.finished_run import FinishedRun, PostRunStep
from scoregate.app.run.power_step import gate_power
from scoregate.app.run.start_steps import START_STEPS
from scoregate.app.run.starting_run import StartingRun, StartStep

__all__ = [
    "FINISH_STEPS",
    "POST_RUN_STEPS",
    "START_STEPS",
    "FinishedRun",
    "PostRunStep",
    "StartStep",
    "StartingRun",
    "finish_run",
]

POST_RUN_STEPS: list[PostRunStep] = [
    judge_canary,  # a judge that changed since its calibration re-scores its canary set
    cascade_report,  # a cascade judge's share kept and cost saved
    gate_power,  # a regression gate whose margin is below what the run can detect
]
"""The steps after a finished run, in order (read when a run starts, so a test may append one)."""
