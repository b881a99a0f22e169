"""Runs as Langfuse experiments, exactly once: the real SDK (4.x or 5.x) against the in-process fake Langfuse.

Each run is made with Langfuse switched off (what a run made while Langfuse was down or disabled leaves),
then mirrored through the sink's entry point `mirror_run_to_langfuse` or `langfuse-sync` (`mirror_all`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import typer
from langfuse import Langfuse

import scoregate.cli as scoregate_cli
from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.catalog.models import PromptSpec
from scoregate.cli import promote_cmd, sync_cmd
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.client import NOT_CONFIGURED
from scoregate.integrations.langfuse.delivery import trace_id_for
from scoregate.integrations.langfuse.mirror_state import STATE_FILE, trace_seed
from scoregate.integrations.langfuse.prompt_source import resolve_prompts
from scoregate.integrations.langfuse.prompts_sync import to_langfuse
from scoregate.integrations.langfuse.score_sender import ScoreLedger
from scoregate.sinks.langfuse.score_mapping import item_scores
from scoregate.store.run_store import RunStore
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.langfuse_mirror import item_of, make_run, mirror, results, root_spans, score_ids, span_metadata
from support.langfuse_mirror import judged_run as judged_run
from support.langfuse_mirror import langfuse_off as langfuse_off  # the fixtures
from support.langfuse_mirror import langfuse_on as langfuse_on
from support.langfuse_sync import sync_run
from support.projects import CliResult
from support.scripted_openai import ScriptedOpenAI

KILL_FIRST_AT_S, KILL_STEP_S, KILL_AT_MOST = 0.8, 0.05, 60
"""`langfuse-sync` is killed at 0.8 s, 0.85 s, ...: while it starts, reaches the server, sends spans, sends scores."""


@pytest.fixture
def finished_run(project_dir: Path, langfuse_off: Callable[[], None]) -> RunStore:
    """A finished run of the `counters` experiment (6 items, no judges) made with Langfuse off."""
    return make_run(project_dir, "counters")


# ---------------------------------------------------------------- one run = one experiment
def test_a_run_becomes_one_experiment_with_generations_item_scores_and_run_scores(
    judged_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None]
) -> None:
    langfuse_on()
    report = mirror(judged_run, project_dir)

    assert report.complete, report.lines()
    assert fake_langfuse.validation_failures == []
    stored, summary = results(judged_run), judged_run.summary
    assert summary is not None
    roots = root_spans(fake_langfuse)
    assert sorted(item_of(s) for s in roots) == sorted(r.item_id for r in stored)
    assert {s["attributes"]["langfuse.experiment.id"] for s in roots} == {report.experiment_id}
    names = {s["attributes"]["langfuse.experiment.name"] for s in roots}
    assert len(names) == 1 and names.pop().startswith(f"{judged_run.run_id} · scripted · summarization-")
    metadata = span_metadata(roots[0], "langfuse.experiment.metadata")
    assert metadata["scoregate.run_id"] == judged_run.run_id
    assert metadata["dataset"].startswith("smoke_v1@")
    assert report.experiment_id is not None and report.experiment_url is not None
    assert report.experiment_url.endswith(f"/experiments/results?baseline={report.experiment_id}")
    assert judged_run.links["langfuse_experiment_url"] == report.experiment_url

    by_item = {item_of(s): s["traceId"] for s in roots}
    for result in stored:
        trace = by_item[result.item_id]
        seed = trace_seed(judged_run.run_id, result.item_id)
        assert trace == trace_id_for(seed) == Langfuse.create_trace_id(seed=seed)  # fixed ids: re-syncs upsert
        task_span = next(s for s in fake_langfuse.state.find_spans("experiment-item-task") if s["traceId"] == trace)
        (generation,) = [s for s in fake_langfuse.state.find_spans("task") if s["traceId"] == trace]
        call = result.task_call
        assert call is not None and call.latency_ms is not None
        attributes = generation["attributes"]
        assert attributes["langfuse.observation.type"] == "generation"
        assert attributes["langfuse.observation.model.name"] == call.model
        assert json.loads(attributes["langfuse.observation.usage_details"]) == {
            "input": call.tokens_in, "output": call.tokens_out
        }  # fmt: skip
        assert json.loads(attributes["langfuse.observation.model.parameters"])["temperature"] == 0.2
        assert call.cost_usd is not None
        assert json.loads(attributes["langfuse.observation.cost_details"]) == {"total": pytest.approx(call.cost_usd)}
        duration_ms = (generation["endTimeUnixNano"] - generation["startTimeUnixNano"]) / 1e6
        assert duration_ms == pytest.approx(call.latency_ms, abs=0.01)
        assert generation["parentSpanId"] == task_span["spanId"]
        judges = [s for s in fake_langfuse.state.spans if s["traceId"] == trace and s["name"].startswith("judge:")]
        assert len(judges) == 3

        posted = {s["name"]: s for s in fake_langfuse.state.scores if s["traceId"] == trace}
        for score in result.scores:
            assert score.value is not None
            sent = posted[score.name]
            assert sent["observationId"] == task_span["spanId"]
            if score.data_type == "boolean":
                assert (sent["dataType"], sent["value"]) == ("BOOLEAN", 1.0 if score.value else 0.0)
            elif score.data_type == "numeric":
                assert (sent["dataType"], sent["value"]) == ("NUMERIC", pytest.approx(float(score.value)))
            else:
                assert sent["value"] == (str(score.value) or "(empty)")
            assert sent["comment"] == score.comment
        assert posted["task_error"]["value"] == 0.0
        assert "unmeasured" not in posted
    assert posted["faithfulness_score"]["comment"]  # the judge's reasoning travels as the comment

    run_level = {s["name"]: s for s in fake_langfuse.state.scores if s["datasetRunId"] == report.experiment_id}
    faithfulness = summary["scores"]["faithfulness_score"]
    assert run_level["faithfulness_score_mean"]["value"] == pytest.approx(faithfulness["mean"])
    assert run_level["faithfulness_score_coverage"]["value"] == 1.0
    assert run_level["success_rate"]["value"] == 1.0
    assert {k: v["value"] for k, v in run_level.items() if k.startswith("gate.")} == {
        f"gate.{g['name']}": g["status"] for g in summary["gates"]
    }
    assert run_level["verdict"]["value"] == summary["verdict"]
    assert report.scores_sent == report.scores_accepted == len(fake_langfuse.state.scores)
    assert len(set(score_ids(fake_langfuse))) == len(fake_langfuse.state.scores)


def test_a_failed_item_is_recorded_with_task_error_and_the_reasons_of_its_null_scores(
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    fake_langfuse: FakeLangfuse,
    langfuse_off: Callable[[], None],
    langfuse_on: Callable[[], None],
) -> None:
    scripted_server.fail_next(400)  # not retryable: one item's task call fails for good
    store = make_run(project_dir, "counters")
    (failed,) = [r for r in results(store) if r.error]
    langfuse_on()

    report = mirror(store, project_dir)

    assert report.complete, report.lines()
    trace = trace_id_for(trace_seed(store.run_id, failed.item_id))
    assert trace in {s["traceId"] for s in root_spans(fake_langfuse)}
    (generation,) = [s for s in fake_langfuse.state.find_spans("task") if s["traceId"] == trace]
    assert generation["attributes"]["langfuse.observation.level"] == "ERROR"
    posted = {s["name"]: s for s in fake_langfuse.state.scores if s["traceId"] == trace}
    assert posted["task_error"]["value"] == 1.0 and posted["task_error"]["comment"] == failed.error
    nulls = {s.name: s.reason for s in failed.scores if s.value is None}
    assert nulls and all(reason for reason in nulls.values())
    assert not set(nulls) & set(posted), "a null score must not be posted as a number"
    assert posted["unmeasured"]["metadata"]["reasons"] == nulls
    run_level = {s["name"]: s["value"] for s in fake_langfuse.state.scores if s["datasetRunId"]}
    assert run_level["error_count"] == 1.0
    assert run_level["tldr_within_cap_coverage"] == pytest.approx(5 / 6)


def test_a_run_on_langfuse_prompts_is_mirrored_live_with_each_prompt_version_linked(
    project_dir: Path, fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None]
) -> None:
    langfuse_on()
    prompts = load_project(project_dir).prompts
    _upload(fake_langfuse, prompts["summarization-catchup"], ["production"])
    _upload(fake_langfuse, prompts["summarization-catchup"], ["candidate"])
    _upload(fake_langfuse, prompts["summarization-howto"], ["production"])

    outcome = run_experiment(project_dir, "counters", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow"}))))

    receipts = outcome.store.manifest["receipts"]["prompts"]
    assert {name: info["version"] for name, info in receipts.items()} == {
        "summarization-catchup": "2", "summarization-howto": "1"
    }  # fmt: skip
    assert outcome.mirrors["langfuse"] == outcome.store.links["langfuse_experiment_url"]
    assert outcome.store.links["langfuse_synced"] is True
    assert len(root_spans(fake_langfuse)) == 6
    linked = {
        (g["attributes"]["langfuse.observation.prompt.name"], g["attributes"]["langfuse.observation.prompt.version"])
        for g in fake_langfuse.state.find_spans("task")
    }
    assert linked == {("summarization-catchup", 2), ("summarization-howto", 1)}


# ---------------------------------------------------------------- exactly once
def test_langfuse_sync_twice_posts_nothing_twice(
    finished_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None]
) -> None:
    langfuse_on()
    first = sync_run(project_dir, finished_run.run_id)
    spans, scores = len(fake_langfuse.state.spans), sorted(score_ids(fake_langfuse))

    second = sync_run(project_dir, finished_run.run_id)

    assert (second.items_sent, second.scores_sent) == (0, 0)
    assert second.experiment_id == first.experiment_id
    assert len(fake_langfuse.state.spans) == spans
    assert sorted(score_ids(fake_langfuse)) == scores and len(set(scores)) == len(scores)


def test_the_mirror_record_keeps_a_digest_per_item_and_still_reads_the_record_of_every_item(
    finished_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None]
) -> None:
    langfuse_on()
    assert mirror(finished_run, project_dir).complete
    path = finished_run.directory / STATE_FILE
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["items"] == {} and record["done"]["count"] == 6  # each item confirmed under its derived trace id
    older = {k: v for k, v in record.items() if k not in ("format", "done", "probe_trace")}
    older["items"] = {  # what a record held before: every item with its ids
        r.item_id: {"trace_id": trace_id_for(trace_seed(finished_run.run_id, r.item_id)), "observation_id": "1" * 16,
                    "trace": True, "scores": r.index != 0}
        for r in results(finished_run)
    }  # fmt: skip
    path.write_text(json.dumps(older), encoding="utf-8")

    again = mirror(finished_run, project_dir)

    first = results(finished_run)[0]
    assert again.complete and again.items_sent == 0
    assert again.scores_sent == len(item_scores(first))  # only the scores of the item they were not confirmed for
    assert len(set(score_ids(fake_langfuse))) == len(fake_langfuse.state.scores)


def test_a_resumed_run_is_mirrored_once_per_item(
    finished_run: RunStore,
    project_dir: Path,
    fake_langfuse: FakeLangfuse,
    langfuse_off: Callable[[], None],
    langfuse_on: Callable[[], None],
) -> None:
    path = finished_run.directory / "results.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3]))  # killed after three items: not finished, no summary
    (finished_run.directory / "summary.json").unlink()
    finished_run.update_manifest(status="interrupted")
    langfuse_on()
    with pytest.raises(ScoregateError, match="did not finish"):
        mirror(finished_run, project_dir)
    assert fake_langfuse.state.spans == []

    langfuse_off()
    store = make_run(project_dir, "counters", resume=finished_run.run_id)
    langfuse_on()
    assert mirror(store, project_dir).complete
    langfuse_off()
    store = make_run(project_dir, "counters", resume=finished_run.run_id)  # resuming a finished run mirrors again
    langfuse_on()
    again = mirror(store, project_dir)

    assert again.complete and again.items_sent == 0
    items = [item_of(s) for s in root_spans(fake_langfuse)]
    assert sorted(items) == sorted(r.item_id for r in results(store))
    assert len(set(score_ids(fake_langfuse))) == len(fake_langfuse.state.scores)


def test_a_run_made_while_langfuse_is_down_is_synced_later_exactly_once(
    finished_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None]
) -> None:
    langfuse_on()
    fake_langfuse.down()

    down = mirror(finished_run, project_dir)  # what the run's own mirror meets: reported, never raised

    assert not down.complete and "unreachable" in down.problems[0]
    assert down.hint is not None and f"scoregate langfuse-sync {finished_run.run_id}" in down.hint
    assert not (finished_run.directory / STATE_FILE).exists()
    fake_langfuse.up()
    later = sync_run(project_dir, finished_run.run_id)
    again = sync_run(project_dir, finished_run.run_id)

    assert later.complete and later.items_sent == 6 and again.items_sent == 0
    assert sorted(item_of(s) for s in root_spans(fake_langfuse)) == sorted(r.item_id for r in results(finished_run))
    assert len(set(score_ids(fake_langfuse))) == len(fake_langfuse.state.scores) == later.scores_sent


def test_traces_the_server_refused_are_sent_again_with_the_same_ids(
    finished_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None]
) -> None:
    langfuse_on()
    # every export of the first mirror fails, however many batches the SDK's span processor makes
    fake_langfuse.fail_next("/api/public/otel/v1/traces", status=400, retry_after=None, times=1000)

    first = mirror(finished_run, project_dir)
    fake_langfuse.clear_faults()

    assert not first.complete and "item trace(s) were not accepted" in first.problems[0]
    assert root_spans(fake_langfuse) == []
    second = mirror(finished_run, project_dir)
    assert second.complete, second.lines()
    assert len(root_spans(fake_langfuse)) == 6
    assert len(set(score_ids(fake_langfuse))) == len(fake_langfuse.state.scores)


def test_a_lost_mirror_record_still_addresses_the_same_trace_span_and_score_ids(
    finished_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None]
) -> None:
    langfuse_on()
    mirror(finished_run, project_dir)
    before = {(s["traceId"], s["spanId"]) for s in fake_langfuse.state.spans}
    scores = sorted(score_ids(fake_langfuse))
    (finished_run.directory / STATE_FILE).unlink()

    assert mirror(finished_run, project_dir).complete

    resent = fake_langfuse.state.spans[len(before) :]
    assert {(s["traceId"], s["spanId"]) for s in resent} == before  # a real server upserts them by id
    assert sorted(score_ids(fake_langfuse)) == scores  # the fake, like Langfuse, replaced each score


def test_a_score_batch_the_server_refuses_is_counted_and_sent_again_by_the_next_sync(
    finished_run: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None]
) -> None:
    langfuse_on()
    score_path = "/api/public/scores" if fake_langfuse.server_mode == "new" else "/api/public/ingestion"
    fake_langfuse.fail_next(score_path, status=400, retry_after=None)

    first = mirror(finished_run, project_dir)

    stored = len(fake_langfuse.state.scores)
    assert first.scores_rejected == first.scores_sent - stored > 0
    assert first.scores_accepted == stored
    assert any("scores were rejected" in p and "HTTP 400" in p for p in first.problems)
    second = mirror(finished_run, project_dir)
    assert second.complete and second.items_sent == 0 and len(root_spans(fake_langfuse)) == 6
    assert len(fake_langfuse.state.scores) == len(set(score_ids(fake_langfuse))) == first.scores_sent


def test_a_partly_refused_batch_counts_as_the_server_says_and_is_not_marked_delivered() -> None:
    ledger = ScoreLedger()
    answer = {"accepted": 2, "rejected": 1, "errors": [{"message": "score 1: value: a BOOLEAN score must be 0 or 1"}]}

    ledger.array_answer(["a", "b", "c"], 207, answer)

    assert ledger.counts(["a", "b", "c"]) == (2, 1)
    assert not any(ledger.is_accepted(i) for i in "abc")  # unknown which: the next sync re-posts all three
    assert ledger.server_errors == [
        "HTTP 207 (part of a batch refused): score 1: value: a BOOLEAN score must be 0 or 1"
    ]


# ---------------------------------------------------------------- old and new servers
@pytest.mark.parametrize("generation", ["old", "new"])
def test_every_score_reaches_a_server_of_either_generation_whatever_the_sdk(
    generation: str,
    finished_run: RunStore,
    project_dir: Path,
    fake_langfuse: FakeLangfuse,
    langfuse_on: Callable[[], None],
) -> None:
    langfuse_on()
    fake_langfuse.server_mode = "old" if generation == "old" else "new"  # v4.16 refuses arrays; v4.59 takes them

    report = sync_run(project_dir, finished_run.run_id)

    assert report.complete, report.lines()
    assert report.scores_accepted == report.scores_sent == len(fake_langfuse.state.scores) > 0
    assert len(root_spans(fake_langfuse)) == 6 and fake_langfuse.validation_failures == []
    assert not fake_langfuse.requests_to("/api/public/scores", status=400)  # no batch thrown away
    used = "/api/public/ingestion" if generation == "old" else "/api/public/scores"
    assert fake_langfuse.requests_to(used, method="POST") and finished_run.links["langfuse_synced"] is True


@pytest.mark.parametrize("hidden", ["health", "version"])
def test_a_server_that_hides_its_generation_still_gets_every_score(
    hidden: str,
    finished_run: RunStore,
    project_dir: Path,
    fake_langfuse: FakeLangfuse,
    langfuse_on: Callable[[], None],
) -> None:
    langfuse_on()
    fake_langfuse.server_mode = "old"
    if hidden == "health":  # a proxy that does not pass /api/public/health: an empty array is the question
        fake_langfuse.missing_apis = ("/api/public/health",)
    else:  # a proxy (or a patched build) that says v4.60 and still refuses arrays: switched at the first answer
        fake_langfuse.server_version = "4.60.0"

    report = sync_run(project_dir, finished_run.run_id)

    assert report.complete, report.lines()
    assert report.scores_accepted == len(fake_langfuse.state.scores) == report.scores_sent
    assert fake_langfuse.state.scores and all(s["dataType"] for s in fake_langfuse.state.scores)
    assert report.switched is (hidden == "version")


# ---------------------------------------------------------------- MLflow link, CLI
def test_mlflow_run_and_langfuse_experiment_are_linked_both_ways(
    finished_run: RunStore,
    project_dir: Path,
    mlflow_store: str,
    fake_langfuse: FakeLangfuse,
    langfuse_on: Callable[[], None],
) -> None:
    from mlflow.tracking import MlflowClient

    from scoregate.sinks.mlflow.run_mirror import mirror_run

    mlflow_run_id = mirror_run(finished_run, project_root=project_dir)
    langfuse_on()

    report = sync_run(project_dir, finished_run.run_id)  # mirror_all hands the Langfuse links to the MLflow sink

    tags = MlflowClient(tracking_uri=mlflow_store).get_run(mlflow_run_id).data.tags
    assert tags["langfuse.experiment_url"] == report.experiment_url
    assert tags["langfuse.experiment_id"] == report.experiment_id
    (linked,) = [s for s in fake_langfuse.state.scores if s["name"] == "mlflow_run_id"]
    assert (linked["value"], linked["datasetRunId"]) == (mlflow_run_id, report.experiment_id)
    metadata = span_metadata(root_spans(fake_langfuse)[0], "langfuse.experiment.metadata")
    assert metadata["mlflow_run_id"] == mlflow_run_id


@pytest.fixture
def cli(scoregate: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., CliResult]]:
    """The `scoregate` fixture with this feature's commands registered (as `scoregate.cli` registers them)."""
    app = typer.Typer(pretty_exceptions_enable=False, add_completion=False)
    app.command("langfuse-sync")(sync_cmd.langfuse_sync)
    app.command("promote")(promote_cmd.promote_command)
    app.command("promotions")(promote_cmd.promotions_command)
    monkeypatch.setattr(scoregate_cli, "app", app)
    yield scoregate


def test_langfuse_sync_command_says_what_is_missing_and_what_to_do(
    finished_run: RunStore,
    cli: Callable[..., CliResult],
    fake_langfuse: FakeLangfuse,
    langfuse_on: Callable[[], None],
) -> None:
    off = cli("langfuse-sync", finished_run.run_id)
    assert off.code == 1 and NOT_CONFIGURED in off.output
    langfuse_on()
    unknown = cli("langfuse-sync", "no-such-run")
    assert unknown.code == 1 and "no run 'no-such-run'" in unknown.output

    done = cli("langfuse-sync", finished_run.run_id)

    assert done.code == 0, done.output
    assert "items: 6/6 mirrored" in done.output and "fully mirrored" in done.output
    fake_langfuse.reset()
    fake_langfuse.fail_next("/api/public/", status=503, retry_after=None, times=10_000)
    (finished_run.directory / STATE_FILE).unlink()
    outage = cli("langfuse-sync", finished_run.run_id)
    assert outage.code == 1 and f"scoregate langfuse-sync {finished_run.run_id}" in outage.output
    fake_langfuse.clear_faults()
    fake_langfuse.fail_next(
        "/api/public/scores" if fake_langfuse.server_mode == "new" else "/api/public/ingestion", status=400, times=99
    )
    refused = cli("langfuse-sync", finished_run.run_id)
    assert refused.code == 5, refused.output  # refused, not out of reach: a retry alone changes nothing
    assert "scores were rejected" in refused.output and "fix what the server names above" in refused.output


def test_a_run_whose_scores_the_server_refuses_prints_the_fix_and_exits_5(
    scoregate: Callable[..., CliResult], fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None]
) -> None:
    langfuse_on()
    fake_langfuse.fail_next(
        "/api/public/scores" if fake_langfuse.server_mode == "new" else "/api/public/ingestion", status=400, times=99
    )

    refused = scoregate("run", "counters", "--prompt-source", "local", "--no-mlflow")

    assert refused.code == 5, refused.output  # never 0: the server kept none of the scores; 3 stays the gates'
    assert "langfuse mirror failed:" in refused.output and "scores were rejected" in refused.output
    assert "fix what the server names above" in refused.output and "scoregate langfuse-sync" in refused.output
    assert fake_langfuse.state.scores == []


def test_a_run_while_langfuse_is_down_keeps_the_redo_and_its_exit_code(
    scoregate: Callable[..., CliResult], fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None]
) -> None:
    langfuse_on()
    fake_langfuse.down()

    down = scoregate("run", "counters", "--prompt-source", "local", "--no-mlflow")

    assert down.code == 0, down.output  # an outage loses nothing: the run is stored and synced later
    assert "langfuse mirror failed:" in down.output and "unreachable" in down.output
    assert "scoregate langfuse-sync" in down.output


def test_a_server_too_old_for_scoregate_is_refused_before_the_first_model_call(
    scoregate: Callable[..., CliResult],
    fake_langfuse: FakeLangfuse,
    langfuse_on: Callable[[], None],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
) -> None:
    langfuse_on()
    fake_langfuse.server_version = "2.95.1"  # a v2 server: no OpenTelemetry ingestion, nothing of a run could land

    refused = scoregate("run", "counters", "--prompt-source", "local", "--no-mlflow")

    assert refused.code == 1
    assert "is server 2.95.1, older than v3.63.0" in refused.output
    assert "upgrade the server to v4.59.0 or newer" in refused.output and "--no-langfuse" in refused.output
    assert scripted_server.requests == [] and not (project_dir / "runs").exists()  # not even the models' check
    assert scoregate("run", "counters", "--no-langfuse", "--no-mlflow").code == 0


# ---------------------------------------------------------------- prompts from Langfuse
def _upload(fake: FakeLangfuse, spec: PromptSpec, labels: list[str]) -> int:
    body = to_langfuse(spec)
    created = fake.state.create_prompt(
        {"name": spec.name, "prompt": body.prompt, "type": body.type, "config": body.config, "labels": labels}
    )
    return int(created["version"])


def test_prompts_resolve_by_candidate_then_production_label_or_version_back_into_the_local_spec(
    project_dir: Path, fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None]
) -> None:
    langfuse_on()
    project = load_project(project_dir)
    local = project.prompts["summarization-catchup"]
    changed = local.model_copy(update={"config": local.config.model_copy(update={"temperature": 0.7})})
    _upload(fake_langfuse, local, ["production"])
    names = ["summarization-catchup"]

    (only_production,) = resolve_prompts(project, names, label=None, version=None).values()
    assert (only_production.version, only_production.chosen_by) == ("1", "label 'production'")
    assert only_production.spec.model_dump(exclude={"labels", "description"}) == local.model_dump(
        exclude={"labels", "description"}
    )
    _upload(fake_langfuse, changed, ["candidate"])
    (candidate,) = resolve_prompts(project, names, label=None, version=None).values()
    assert (candidate.langfuse_version, candidate.spec.config.temperature) == (2, 0.7)
    assert resolve_prompts(project, names, label="production", version=None)[names[0]].version == "1"
    assert resolve_prompts(project, names, label=None, version=2)[names[0]].labels == ("candidate", "latest")

    with pytest.raises(ScoregateError, match="carries the label 'staging'"):
        resolve_prompts(project, names, label="staging", version=None)
    with pytest.raises(ScoregateError, match="has no version 9"):
        resolve_prompts(project, names, label=None, version=9)
    with pytest.raises(ScoregateError, match="neither a 'candidate' nor a 'production'"):
        resolve_prompts(project, ["summarization-howto"], label=None, version=None)
    with pytest.raises(ScoregateError, match="ambiguous"):
        resolve_prompts(project, [*names, "summarization-howto"], label=None, version=1)


def test_a_prompt_scoregate_cannot_run_is_refused_and_langfuse_must_be_configured(
    project_dir: Path, fake_langfuse: FakeLangfuse, langfuse_on: Callable[[], None], langfuse_off: Callable[[], None]
) -> None:
    project = load_project(project_dir)
    with pytest.raises(ScoregateError, match="Langfuse is not configured"):
        resolve_prompts(project, ["p"], label=None, version=None)
    langfuse_on()
    fake_langfuse.state.create_prompt(
        {"name": "p", "type": "chat", "labels": ["production"],
         "prompt": [{"role": "system", "content": "hi"}, {"type": "placeholder", "name": "history"}]}
    )  # fmt: skip
    with pytest.raises(ScoregateError, match="placeholder"):
        resolve_prompts(project, ["p"], label=None, version=None)
