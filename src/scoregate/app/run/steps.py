"""The run as a list of steps: start reading here.

A run goes plan → budget gate → items → summary → post-run steps → mirrors:

1. plan and budget gate: `one_run.run_one` (the plan, the stop-early plan, the budget gate, the models' check,
   the store), in that order, before any model call;
2. items: one of three ways, chosen once per run by `items.choose_items`: one shard's items, a stop-early run's
   batches, or every item (each repeat). A shard then ends at `shards.finish_shard` (`scoregate merge` summarises);
3. `FINISH_STEPS`, in order, for a whole run: each takes the `FinishedRun` and adds to its outcome;
4. among them, the post-run steps (`POST_RUN_STEPS`): after the summary and the report, before the mirrors, each
   receiving the finished run. `run_experiment` hands them to the run; a canary's own runs get none.

A new feature after a run is one module with one `PostRunStep` function, plus one line in `POST_RUN_STEPS`.
"""

from __future__ import annotations

from scoregate.app.run.canary_step import judge_canary
from scoregate.app.run.finish_steps import FINISH_STEPS, finish_run
from scoregate.app.run.finished_run import FinishedRun, PostRunStep

__all__ = ["FINISH_STEPS", "POST_RUN_STEPS", "FinishedRun", "PostRunStep", "finish_run"]

POST_RUN_STEPS: list[PostRunStep] = [
    judge_canary,  # a judge that changed since its calibration re-scores its canary set
]
"""The steps after a finished run, in order (read when a run starts, so a test may append one)."""
