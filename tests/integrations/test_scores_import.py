"""`scoregate scores import`: ratings and feedback validated row by row, posted as Langfuse scores, kept locally."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.scores_import import import_scores, load_feedback
from scoregate.integrations.langfuse.client import NOT_CONFIGURED, LangfuseSettings
from scoregate.integrations.langfuse.mirror_state import STATE_FILE
from scoregate.integrations.langfuse.remote import Remote
from scoregate.integrations.langfuse.throttle import Throttle
from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import LANGFUSE_VARS, langfuse_env_fixture  # noqa: F401
from support.projects import CliResult

Cli = Callable[..., CliResult]
T1, T2 = "a" * 32, "b" * 32
RATINGS = f"""\
trace_id,key,value,comment,rater
{T1},human_actionability,4,clear next steps,ana
{T1},human_faithfulness,5,,ana
{T1},human_notes,"Good, but the TL;DR is long",,ana
{T2},online_thumb,+1,,
{T2},feedback_comment,Loved the links,,
"""


def write(path: Path, text: str) -> Path:
    """Write `text` to `path` and return the path."""
    path.write_text(text, encoding="utf-8")
    return path


def stored(fake: FakeLangfuse) -> list[tuple[Any, ...]]:
    """Return (trace, name, value, data type, comment) of every score the fake holds, sorted."""
    return sorted((s["traceId"], s["name"], s["value"], s["dataType"], s["comment"]) for s in fake.state.scores)


def local_lines(project_dir: Path) -> list[dict[str, Any]]:
    """Return the parsed lines of the local feedback store."""
    path = project_dir / "feedback" / "scores.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def test_csv_ratings_become_langfuse_scores_and_a_local_copy(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    result = scoregate("scores", "import", str(write(project_dir / "ratings.csv", RATINGS)))
    assert result.code == 0, result.output
    assert stored(langfuse_env) == [
        (T1, "human_actionability", 4.0, "NUMERIC", "clear next steps"),
        (T1, "human_faithfulness", 5.0, "NUMERIC", None),
        (T1, "human_notes", "Good, but the TL;DR is long", "TEXT", None),
        (T2, "feedback_comment", "Loved the links", "TEXT", None),
        (T2, "online_thumb", 1.0, "NUMERIC", None),
    ]
    assert langfuse_env.validation_failures == []
    lines = local_lines(project_dir)
    assert [(r["key"], r["value"], r["rater"]) for r in lines][:2] == [
        ("human_actionability", 4.0, "ana"),
        ("human_faithfulness", 5.0, "ana"),
    ]
    assert {r["score_id"] for r in lines} == {s["id"] for s in langfuse_env.state.scores}
    assert "5 scores posted to" in result.output and "5 new or changed, 0 unchanged" in result.output


def test_imported_scores_carry_the_config_id_of_their_key_made_once_when_langfuse_lacks_it(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    ratings = write(project_dir / "ratings.csv", RATINGS)
    assert scoregate("scores", "import", str(ratings)).code == 0
    configs = {c["name"]: c for c in langfuse_env.state.score_configs.values()}
    assert sorted(configs) == sorted({s["name"] for s in langfuse_env.state.scores})  # one config per imported key
    assert {s["name"]: s["configId"] for s in langfuse_env.state.scores} == {n: c["id"] for n, c in configs.items()}
    assert (configs["online_thumb"]["minValue"], configs["online_thumb"]["maxValue"]) == (-1, 1)
    again = scoregate("scores", "import", str(ratings))
    assert again.code == 0 and len(langfuse_env.state.score_configs) == len(configs)  # found, not made again
    assert langfuse_env.validation_failures == []


def test_importing_again_replaces_the_scores_instead_of_duplicating_them(
    fake_langfuse: FakeLangfuse, project_dir: Path
) -> None:
    settings = LangfuseSettings(fake_langfuse.public_key, fake_langfuse.secret_key, fake_langfuse.base_url)
    remote = Remote(settings, throttle=Throttle(0))
    ratings = write(project_dir / "ratings.csv", RATINGS)
    monday = dt.datetime(2026, 3, 2, 9, tzinfo=dt.UTC)
    import_scores(project_dir, ratings, remote=remote, now=monday)
    write(ratings, RATINGS.replace("human_actionability,4", "human_actionability,2"))
    again = import_scores(project_dir, ratings, remote=remote, now=monday + dt.timedelta(days=3))
    assert (again.local_new, again.local_unchanged, again.posted, again.already) == (1, 4, 1, 4)
    assert len(fake_langfuse.state.scores) == 5  # same ids, same day as first imported: replaced in place
    assert ("human_actionability", 2.0) in {(s["name"], s["value"]) for s in fake_langfuse.state.scores}
    assert {s["timestamp"][:10] for s in fake_langfuse.state.scores} == {"2026-03-02"}
    latest = load_feedback(project_dir)
    assert len(latest) == 5 and len(local_lines(project_dir)) == 6


def test_importing_an_unchanged_file_again_writes_nothing(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    ratings = write(project_dir / "ratings.csv", RATINGS)
    assert scoregate("scores", "import", str(ratings)).code == 0
    since = len(langfuse_env.requests)

    again = scoregate("scores", "import", str(ratings))

    assert again.code == 0, again.output
    assert [(r.method, r.path) for r in langfuse_env.requests[since:] if r.method != "GET"] == []
    assert "0 scores posted" in again.output and "5 unchanged, already in Langfuse" in again.output
    assert len(langfuse_env.state.scores) == 5 and len(local_lines(project_dir)) == 5


def test_every_invalid_row_is_named_and_nothing_is_imported(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    bad = write(
        project_dir / "ratings.csv",
        "trace_id,key,value,comment\n"
        f"{T1},human_actionability,4,\n"
        f"{T1},human_clarity,4,\n"
        f"{T1},human_faithfulness,7,\n"
        ",online_thumb,1,\n"
        f"{T2},online_thumb,0.5,\n"
        f"{T2},human_notes,,\n",
    )
    result = scoregate("scores", "import", str(bad))
    assert result.code == 1
    for expected in (
        f"{bad}:3: key: unknown key 'human_clarity' (known: human_actionability,",
        f"{bad}:4: value: human_faithfulness 7 is outside 1..5",
        f"{bad}:5: needs trace_id, or run_id and item_id",
        f"{bad}:6: value: online_thumb needs a whole number, got '0.5'",
        f"{bad}:7: value: missing (human_notes: a rater's free-text notes)",
    ):
        assert expected in result.output
    assert f"{bad}:2" not in result.output
    assert langfuse_env.requests == []
    assert local_lines(project_dir) == []


def test_jsonl_rows_are_checked_the_same_way(scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path) -> None:
    bad = write(
        project_dir / "feedback.jsonl",
        json.dumps({"trace_id": T1, "key": "online_thumb", "value": -1}) + "\n"
        "{not json\n"
        + json.dumps({"trace_id": T1, "key": "online_thumb", "value": True, "score": 1})
        + "\n"
        + json.dumps({"trace_id": T1, "key": "online_thumb", "value": 1})
        + "\n",
    )
    result = scoregate("scores", "import", str(bad))
    assert result.code == 1
    assert f"{bad}:2: not valid JSON" in result.output
    assert f"{bad}:3: unknown column score" in result.output
    assert f"{bad}:3: value: online_thumb needs a number, got True" in result.output
    assert f"{bad}:4: the same score as {bad}:1 (same target, key and rater)" in result.output
    assert langfuse_env.requests == []


def test_item_rows_find_their_trace_through_the_run_store(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    run = project_dir / "runs" / "smoke-20260302-090000-0001"
    run.mkdir(parents=True)
    mirrored = {
        "smoke-001": {"trace_id": T1, "observation_id": None, "trace": True, "scores": True},
        "smoke-002": {"trace_id": "f" * 32, "observation_id": None, "trace": False, "scores": False},
    }
    (run / STATE_FILE).write_text(json.dumps({"host": langfuse_env.base_url, "items": mirrored}), encoding="utf-8")
    ratings = write(
        project_dir / "ratings.csv",
        f"run_id,item_id,key,value\n{run.name},smoke-001,human_conciseness,3\n{run.name},smoke-404,human_conciseness,2\n"
        f"{run.name},smoke-002,human_conciseness,2\n",
    )
    result = scoregate("scores", "import", str(ratings))
    assert result.code == 1
    assert f"{ratings}:3: item 'smoke-404' of run '{run.name}' has no Langfuse trace" in result.output
    assert f"{ratings}:4: item 'smoke-002' of run '{run.name}' has no Langfuse trace" in result.output  # unconfirmed
    assert langfuse_env.requests == []

    write(ratings, f"run_id,item_id,key,value\n{run.name},smoke-001,human_conciseness,3\n")
    assert scoregate("scores", "import", str(ratings)).code == 0
    assert stored(langfuse_env) == [(T1, "human_conciseness", 3.0, "NUMERIC", None)]
    assert [(r["run_id"], r["item_id"], r["trace_id"]) for r in local_lines(project_dir)] == [
        (run.name, "smoke-001", T1)
    ]


def test_local_only_keeps_ratings_without_langfuse(
    scoregate: Cli, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in LANGFUSE_VARS:
        monkeypatch.delenv(name, raising=False)
    assert scoregate("run", "counters", "--limit", "1", "--no-mlflow").code == 0
    (run_id,) = [p.name for p in (project_dir / "runs").iterdir() if p.is_dir()]
    ratings = write(project_dir / "ratings.csv", f"run_id,item_id,key,value\n{run_id},smoke-001,human_faithfulness,4\n")
    refused = scoregate("scores", "import", str(ratings))
    assert refused.code == 1
    assert NOT_CONFIGURED in refused.output and "pass --local-only to keep them locally" in refused.output
    result = scoregate("scores", "import", str(ratings), "--local-only")
    assert result.code == 0
    assert "Langfuse: skipped (--local-only)" in result.output
    assert [(r["item_id"], r["key"], r["value"]) for r in local_lines(project_dir)] == [
        ("smoke-001", "human_faithfulness", 4.0)
    ]


def test_local_only_refuses_ratings_of_runs_and_items_that_do_not_exist(
    scoregate: Cli, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in LANGFUSE_VARS:
        monkeypatch.delenv(name, raising=False)
    assert scoregate("run", "counters", "--limit", "1", "--no-mlflow").code == 0
    (run_id,) = [p.name for p in (project_dir / "runs").iterdir() if p.is_dir()]
    rows = (
        f"run_id,item_id,key,value\nno-such-run,smoke-001,human_faithfulness,4\n{run_id},nosuch,human_faithfulness,3\n"
    )
    ratings = write(project_dir / "ratings.csv", rows)

    result = scoregate("scores", "import", str(ratings), "--local-only")

    assert result.code == 1, result.output
    assert "run_id: no run 'no-such-run'" in result.output
    assert f"item_id: run {run_id!r} has no item 'nosuch'" in result.output
    assert local_lines(project_dir) == []


def test_dry_run_validates_only(scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path) -> None:
    result = scoregate("scores", "import", str(write(project_dir / "ratings.csv", RATINGS)), "--dry-run")
    assert result.code == 0
    assert "5 valid rows" in result.output and "dry run: nothing written" in result.output
    assert langfuse_env.requests == [] and local_lines(project_dir) == []


def test_an_older_server_gets_the_scores_as_events_whatever_the_sdk(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    langfuse_env.server_mode = "old"  # v4.16: refuses score arrays (SDK 5's form), takes score-create events

    result = scoregate("scores", "import", str(write(project_dir / "ratings.csv", RATINGS)))

    assert result.code == 0, result.output
    assert len(stored(langfuse_env)) == 5 and langfuse_env.validation_failures == []
    assert langfuse_env.requests_to("/api/public/ingestion", status=207)
    assert not langfuse_env.requests_to("/api/public/scores", status=400)


def test_scores_the_server_refuses_are_named_with_the_fix_and_exit_5(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    score_path = "/api/public/scores" if langfuse_env.server_mode == "new" else "/api/public/ingestion"
    langfuse_env.fail_next(score_path, status=400, retry_after=None)
    ratings = write(project_dir / "ratings.csv", RATINGS)

    result = scoregate("scores", "import", str(ratings))

    assert result.code == 5, result.output
    assert "Langfuse refused 5 of 5 scores" in result.output and "HTTP 400" in result.output
    assert "fix what the server names, then import the file again" in result.output
    assert langfuse_env.state.scores == [] and len(local_lines(project_dir)) == 5
    again = scoregate("scores", "import", str(ratings))  # nothing was confirmed: all five are posted now
    assert again.code == 0 and len(stored(langfuse_env)) == 5


def one_rating(run_id: str) -> str:
    """A CSV with one human rating of the run's item smoke-001."""
    return f"run_id,item_id,key,value\n{run_id},smoke-001,human_faithfulness,4\n"


@pytest.fixture
def local_run(scoregate: Cli, project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Langfuse off, one stored run of `counters`; return its id."""
    for name in LANGFUSE_VARS:
        monkeypatch.delenv(name, raising=False)
    assert scoregate("run", "counters", "--limit", "1", "--no-mlflow").code == 0
    (run_id,) = [p.name for p in (project_dir / "runs").iterdir() if p.is_dir()]
    return run_id


def test_a_relative_file_is_read_from_the_project_and_a_bom_is_not_a_column(
    scoregate: Cli, project_dir: Path, local_run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ratings = f"\ufeffrun_id,item_id,key,value\n{local_run},smoke-001,human_faithfulness,4\n"  # as Excel saves CSV
    write(project_dir / "ratings.csv", ratings)
    monkeypatch.chdir(tmp_path)

    result = scoregate("scores", "import", "ratings.csv", "--local-only")

    assert result.code == 0, result.output
    assert [(r["item_id"], r["value"]) for r in local_lines(project_dir)] == [("smoke-001", 4.0)]


def test_a_ratings_byte_that_is_not_utf8_is_named_by_line(scoregate: Cli, project_dir: Path, local_run: str) -> None:
    path = project_dir / "ratings.csv"
    path.write_bytes(
        f"run_id,item_id,key,value,comment\n{local_run},smoke-001,human_notes,ok,caf\xe9\n".encode("latin-1")
    )

    result = scoregate("scores", "import", str(path), "--local-only")

    assert result.code == 1, result.output
    assert f"{path}:2: not UTF-8 (byte 0xe9" in result.output
    assert local_lines(project_dir) == []


def test_a_damaged_local_store_is_named_and_kept(scoregate: Cli, project_dir: Path, local_run: str) -> None:
    store = project_dir / "feedback" / "scores.jsonl"
    store.parent.mkdir()
    store.write_text('{"score_id": "s1", "key": "human_notes"}\n{"score_id": "s2", "ke\n', encoding="utf-8")
    before = store.read_bytes()
    ratings = write(project_dir / "ratings.csv", one_rating(local_run))

    result = scoregate("scores", "import", str(ratings), "--local-only")

    assert result.code == 1, result.output
    assert f"{store}:2: damaged feedback record: not valid JSON" in result.output
    assert store.read_bytes() == before


def test_a_local_store_without_its_last_newline_gets_a_new_line(
    scoregate: Cli, project_dir: Path, local_run: str
) -> None:
    store = project_dir / "feedback" / "scores.jsonl"
    store.parent.mkdir()
    kept = {"score_id": "s1", "key": "human_notes", "value": "x", "timestamp": "2026-01-01T00:00:00+00:00"}
    store.write_text(json.dumps(kept), encoding="utf-8")  # edited by hand: no newline at the end
    ratings = write(project_dir / "ratings.csv", one_rating(local_run))

    assert scoregate("scores", "import", str(ratings), "--local-only").code == 0

    assert [r["score_id"] == "s1" for r in local_lines(project_dir)] == [True, False]
