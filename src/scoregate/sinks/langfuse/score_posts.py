"""What the mirror posts for one item besides its trace: its scores under fixed ids, and its dataset run item.

Scores go through the session's `ScoreSender` (the form the server's generation takes), each with the id of its
key's score config when the value fits that config; the ids posted are kept in the context's batch until the
next confirmation reads the server's answers about them.
"""

from __future__ import annotations

from scoregate.integrations.langfuse.datasets_sync import langfuse_item_id
from scoregate.integrations.langfuse.delivery import MirrorClient
from scoregate.integrations.langfuse.mirror_state import ItemMirror, item_score_id, run_score_id
from scoregate.integrations.langfuse.score_sender import ScoreWrite
from scoregate.sinks.langfuse.context import MirrorContext, mirror_key
from scoregate.sinks.langfuse.mirror_batch import RUN_LEVEL
from scoregate.sinks.langfuse.score_mapping import ScorePost, item_scores, run_scores
from scoregate.store.records import ItemResult


def post_score(session: MirrorClient, ctx: MirrorContext, post: ScorePost, score_id: str, **target: str | None) -> str:
    """Queue one score with its fixed id and the run's time (and its config id when it fits); return the id."""
    from scoregate.integrations.langfuse.score_configs import fits

    config = ctx.configs.get(post.name)
    config_id = str(config["id"]) if config is not None and fits(config, post.value, post.data_type) else None
    session.scores.send(
        ScoreWrite(
            id=score_id,
            name=post.name,
            value=post.value,
            timestamp=ctx.timestamp,
            data_type=post.data_type,
            comment=post.comment,
            metadata=post.metadata,
            config_id=config_id,
            **target,
        )
    )
    return score_id


def post_item(session: MirrorClient, ctx: MirrorContext, result: ItemResult, placed: ItemMirror) -> None:
    """Post one item's scores on its trace and, where scoregate keeps the dataset run (SDK 5 on a server older
    than v4.59), its run item; both are confirmed with the next batch."""
    run_id, key = ctx.store.run_id, mirror_key(result)
    target = {"trace_id": placed.trace_id, "observation_id": placed.observation_id}
    ctx.batch.posted[key] = [
        post_score(session, ctx, post, item_score_id(run_id, key, post.name), **target) for post in item_scores(result)
    ]
    if ctx.dataset_run is not None and placed.trace_id:
        dataset_item = langfuse_item_id(ctx.manifest.receipts.dataset_name(), result.item_id)
        if not ctx.dataset_run.link(dataset_item, placed.trace_id, placed.observation_id):
            ctx.batch.unlinked.add(key)


def post_run_scores(session: MirrorClient, ctx: MirrorContext, experiment_id: str) -> None:
    """Post the run-level scores (aggregates, gates, verdict, the MLflow run id) on the experiment."""
    assert ctx.summary is not None
    ids = ctx.batch.posted.setdefault(RUN_LEVEL, [])
    for post in run_scores(ctx.summary, ctx.store.links.get("mlflow_run_id")):
        score_id = run_score_id(ctx.store.run_id, post.name)
        ids.append(post_score(session, ctx, post, score_id, dataset_run_id=experiment_id))
