"""`scoregate datasets sync` and `prompts sync`, driven through the real SDK against the fake Langfuse server."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse import datasets_sync
from scoregate.integrations.langfuse.client import LangfuseSettings
from scoregate.integrations.langfuse.datasets_sync import LOCAL_ID_KEY, langfuse_item_id, sync_datasets
from scoregate.integrations.langfuse.remote import Remote
from scoregate.integrations.langfuse.throttle import Throttle
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import langfuse_env_fixture  # noqa: F401
from support.projects import DATASET_IDS, CliResult

Cli = Callable[..., CliResult]
DATASET = "smoke_v1"
ITEMS = "/api/public/dataset-items"
PROMPTS = "/api/public/v2/prompts"


def table_row(result: CliResult, first_cell: str) -> list[str]:
    """Return the cells of the printed table row whose first cell is `first_cell`."""
    for line in result.out.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no table row {first_cell!r} in:\n{result.out}")


def writes(fake: FakeLangfuse, since: int = 0) -> list[tuple[str, str]]:
    """Return (method, path) of every request after the first `since` that was not a read."""
    return [(r.method, r.path) for r in fake.requests[since:] if r.method != "GET"]


def edit_jsonl(path: Path, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    """Rewrite a JSONL file through `change` (which gets and returns the parsed lines)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    path.write_text("".join(json.dumps(r) + "\n" for r in change(rows)), encoding="utf-8")


# ---- datasets -----------------------------------------------------------------------------------
def test_first_sync_creates_the_dataset_and_items_under_stable_ids(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    result = scoregate("datasets", "sync")
    assert result.code == 0, result.output
    assert table_row(result, DATASET) == [DATASET, "create", "6", "0", "0", "0", "0", "0"]
    meta = load_project(project_dir).datasets[DATASET].meta
    stored = langfuse_env.state.datasets[DATASET]
    assert (stored["description"], stored["metadata"], stored["inputSchema"]) == (
        meta.description,
        meta.metadata,
        meta.input_schema,
    )
    items = {i["id"]: i for i in langfuse_env.state.items.values()}
    assert set(items) == {langfuse_item_id(DATASET, local) for local in DATASET_IDS}
    local = {json.loads(line)["id"]: json.loads(line) for line in (project_dir / "datasets/smoke_v1.jsonl").open()}
    for local_id, row in local.items():
        item = items[langfuse_item_id(DATASET, local_id)]
        assert (item["input"], item["metadata"][LOCAL_ID_KEY], item["status"]) == (row["input"], local_id, "ACTIVE")
    assert langfuse_env.validation_failures == []


def test_item_ids_differ_across_datasets_because_langfuse_ids_are_project_wide() -> None:
    assert langfuse_item_id("a", "item-1") != langfuse_item_id("b", "item-1")
    assert langfuse_item_id("a", "item-1") == langfuse_item_id("a", "item-1")


def test_second_sync_without_local_change_writes_nothing(scoregate: Cli, langfuse_env: FakeLangfuse) -> None:
    assert scoregate("datasets", "sync").code == 0
    before = len(langfuse_env.requests)
    result = scoregate("datasets", "sync")
    assert result.code == 0
    assert writes(langfuse_env, before) == []
    assert table_row(result, DATASET) == [DATASET, "unchanged", "0", "0", "0", "6", "0", "0"]
    assert "applied: 0 writes" in result.output


def test_items_beyond_the_first_page_are_compared_too(
    scoregate: Cli, langfuse_env: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(datasets_sync, "PAGE_SIZE", 4)
    assert scoregate("datasets", "sync").code == 0
    before = len(langfuse_env.requests)
    assert table_row(scoregate("datasets", "sync"), DATASET)[5] == "6"
    listed = [r.query["page"] for r in langfuse_env.requests[before:] if r.path == ITEMS]
    assert listed == ["1", "2"]


def test_a_changed_description_updates_the_dataset_only(
    scoregate: Cli,
    langfuse_env: FakeLangfuse,
    project_dir: Path,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> None:
    assert scoregate("datasets", "sync").code == 0
    edit_yaml(project_dir / "datasets/smoke_v1.yaml", lambda meta: meta.update(description="Smoke set, v1.1"))
    before = len(langfuse_env.requests)
    result = scoregate("datasets", "sync")
    assert table_row(result, DATASET) == [DATASET, "update", "0", "0", "0", "6", "0", "0"]
    assert writes(langfuse_env, before) == [("POST", "/api/public/v2/datasets")]
    assert langfuse_env.state.datasets[DATASET]["description"] == "Smoke set, v1.1"


def test_a_json_looking_string_the_server_parses_does_not_count_as_a_change(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    def add_numeric_reference(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [*rows, {**rows[0], "id": "numeric-ref", "expected_output": "42"}]

    edit_jsonl(project_dir / "datasets/smoke_v1.jsonl", add_numeric_reference)
    assert scoregate("datasets", "sync").code == 0
    assert langfuse_env.state.items[langfuse_item_id(DATASET, "numeric-ref")]["expectedOutput"] == 42
    before = len(langfuse_env.requests)
    assert table_row(scoregate("datasets", "sync"), DATASET)[5] == "7"
    assert writes(langfuse_env, before) == []


def test_changed_added_and_removed_items_then_prune_archives_never_deletes(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    assert scoregate("datasets", "sync").code == 0

    removed_row: dict[str, Any] = {}

    def change(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        removed_row.update(rows[1])
        rows[0]["input"]["title"] += " (re-edited)"
        added = {**rows[2], "id": "smoke-new"}
        return [rows[0], *rows[2:], added]  # smoke-002 removed

    edit_jsonl(project_dir / "datasets/smoke_v1.jsonl", change)
    removed = langfuse_item_id(DATASET, "smoke-002")
    result = scoregate("datasets", "sync")
    assert table_row(result, DATASET) == [DATASET, "unchanged", "1", "0", "1", "4", "0", "1"]
    assert "1 items exist only in Langfuse; `--prune` archives them" in result.output
    assert langfuse_env.state.items[removed]["status"] == "ACTIVE"
    edited = langfuse_env.state.items[langfuse_item_id(DATASET, "smoke-001")]
    assert edited["input"]["title"].endswith("(re-edited)")

    pruned = scoregate("datasets", "sync", "--prune")
    assert table_row(pruned, DATASET) == [DATASET, "unchanged", "0", "0", "0", "6", "1", "0"]
    assert langfuse_env.state.items[removed]["status"] == "ARCHIVED"
    assert langfuse_env.state.items[removed]["input"] is not None  # archived with its content, not blanked
    assert [r for r in langfuse_env.requests if r.method == "DELETE"] == []
    before = len(langfuse_env.requests)
    assert table_row(scoregate("datasets", "sync", "--prune"), DATASET)[6] == "0"
    assert writes(langfuse_env, before) == []

    edit_jsonl(project_dir / "datasets/smoke_v1.jsonl", lambda rows: [*rows, removed_row])  # smoke-002 is back
    restored = scoregate("datasets", "sync", "--prune")
    assert table_row(restored, DATASET) == [DATASET, "unchanged", "0", "1", "0", "6", "0", "0"]
    assert langfuse_env.state.items[removed]["status"] == "ACTIVE"


def test_dry_run_shows_the_plan_and_writes_nothing(scoregate: Cli, langfuse_env: FakeLangfuse) -> None:
    result = scoregate("datasets", "sync", "--dry-run")
    assert result.code == 0
    assert table_row(result, DATASET) == [DATASET, "create", "6", "0", "0", "0", "0", "0"]
    assert "dry run: nothing written (7 writes planned)" in result.output
    assert writes(langfuse_env) == []


def test_429_during_sync_is_retried_after_retry_after(scoregate: Cli, langfuse_env: FakeLangfuse) -> None:
    langfuse_env.fail_next(ITEMS, status=429, retry_after=1)
    result = scoregate("datasets", "sync")
    assert result.code == 0, result.output
    statuses = [r.status for r in langfuse_env.requests_to(ITEMS, method="POST")]
    assert statuses == [429] + [200] * 6
    assert len(langfuse_env.state.items) == 6


def _remote(fake: FakeLangfuse, throttle: Throttle, max_retries: int = 5) -> Remote:
    settings = LangfuseSettings(public_key=fake.public_key, secret_key=fake.secret_key, host=fake.base_url)
    return Remote(settings, throttle=throttle, max_retries=max_retries)


def test_a_rate_limit_that_does_not_lift_stops_clearly_and_a_rerun_finishes(
    fake_langfuse: FakeLangfuse, project_dir: Path
) -> None:
    project = load_project(project_dir)
    fake_langfuse.fail_next(ITEMS, status=429, retry_after=1)
    with pytest.raises(ScoregateError) as raised:
        sync_datasets(project, remote=_remote(fake_langfuse, Throttle(0), max_retries=0))
    assert "rate limit" in raised.value.message and "SCOREGATE_LANGFUSE_RPM" in str(raised.value.hint)
    rerun = sync_datasets(project, remote=_remote(fake_langfuse, Throttle(0)))
    assert (rerun.plans[0].action, rerun.total("create")) == ("unchanged", 6)


class FakeClock:
    """A clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_sync_requests_are_spaced_by_the_throttle(fake_langfuse: FakeLangfuse, project_dir: Path) -> None:
    clock = FakeClock()
    remote = _remote(fake_langfuse, Throttle(60, burst=2, clock=clock, sleep=clock.sleep))
    report = sync_datasets(load_project(project_dir), remote=remote)
    assert report.requests == len(fake_langfuse.requests) == 9  # project, dataset read, dataset, 6 items
    assert clock.sleeps == pytest.approx([1.0] * 7)  # two at once, then one a second
    assert report.throttled_s == pytest.approx(7.0)


def test_throttle_refills_while_idle_and_never_exceeds_its_burst() -> None:
    clock = FakeClock()
    throttle = Throttle(120, burst=3, clock=clock, sleep=clock.sleep)
    assert [throttle.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert throttle.acquire() == pytest.approx(0.5)
    clock.now += 60  # a long pause refills the bucket only up to its burst
    assert [throttle.acquire() for _ in range(4)] == pytest.approx([0.0, 0.0, 0.0, 0.5])
    unlimited = Throttle(0, clock=clock, sleep=clock.sleep)
    assert sum(unlimited.acquire() for _ in range(1000)) == 0.0


def test_an_item_breaking_the_schema_is_named_before_any_request(
    scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path
) -> None:
    path = project_dir / "datasets/smoke_v1.jsonl"
    edit_jsonl(path, lambda rows: [*rows, {"id": "bad", "input": {"title": "no transcript"}}])
    result = scoregate("datasets", "sync")
    assert result.code == 1
    assert f"{path}:7: input: 'transcript' is a required property" in result.output
    assert langfuse_env.requests == []


def test_an_unknown_dataset_name_lists_the_known_ones(scoregate: Cli, langfuse_env: FakeLangfuse) -> None:
    result = scoregate("datasets", "sync", "smoke_v2")
    assert result.code == 1
    assert "no dataset 'smoke_v2'" in result.output and f"(found: {DATASET})" in result.output


# ---- prompts ------------------------------------------------------------------------------------
CATCHUP, HOWTO = "summarization-catchup", "summarization-howto"


@pytest.fixture
def git_sha(project_dir: Path) -> str:
    """Make the project a git repository with one commit; return the commit."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.com"]
    for args in (["init", "-q"], ["add", "-A"], [*identity, "commit", "-q", "-m", "project"]):
        subprocess.run(["git", *args], cwd=project_dir, check=True, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project_dir, check=True, capture_output=True, text=True)
    return head.stdout.strip()


def versions(fake: FakeLangfuse, name: str) -> list[tuple[int, list[str]]]:
    """Return (version, labels) of every stored version of prompt `name`."""
    return [(v["version"], v["labels"]) for v in fake.state.prompts.get(name, [])]


def test_prompt_sync_creates_a_version_per_prompt_as_langfuse_stores_prompts(
    scoregate: Cli, langfuse_env: FakeLangfuse, git_sha: str, project_dir: Path
) -> None:
    result = scoregate("prompts", "sync")
    assert result.code == 0, result.output
    assert table_row(result, CATCHUP)[1:3] == ["create", "v1 (new)"]
    assert versions(langfuse_env, CATCHUP) == [(1, ["candidate", "latest"])]
    stored = langfuse_env.state.prompts[CATCHUP][0]
    spec = load_project(project_dir).prompts[CATCHUP]
    assert stored["type"] == "chat"
    assert stored["prompt"] == [{"role": m.role, "content": m.content} for m in spec.messages or []]
    assert stored["config"] == {"temperature": 0.2, "max_tokens": 320, "scoregate_variables": {"max_words_tldr": 80}}
    assert stored["commitMessage"] == git_sha
    assert langfuse_env.validation_failures == []


def test_second_prompt_sync_creates_nothing(scoregate: Cli, langfuse_env: FakeLangfuse, project_dir: Path) -> None:
    shipped = len(list((project_dir / "prompts").glob("*.yaml")))
    assert scoregate("prompts", "sync").code == 0
    before = len(langfuse_env.requests)
    result = scoregate("prompts", "sync")
    assert result.code == 0
    assert writes(langfuse_env, before) == []
    assert table_row(result, CATCHUP)[1:3] == ["unchanged", "v1"]
    assert f"0 versions created, 0 relabelled, {shipped} unchanged" in result.output


def test_a_changed_template_makes_one_new_version_and_moves_its_labels(
    scoregate: Cli,
    langfuse_env: FakeLangfuse,
    project_dir: Path,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> None:
    assert scoregate("prompts", "sync").code == 0

    def reword(data: Any) -> None:
        data["messages"][1]["content"] += "\nBe brief."

    edit_yaml(project_dir / "prompts" / f"{CATCHUP}.yaml", reword)
    result = scoregate("prompts", "sync")
    assert table_row(result, CATCHUP)[1:4] == ["create", "v2 (new)", "v1"]
    assert table_row(result, HOWTO)[1:3] == ["unchanged", "v1"]
    assert versions(langfuse_env, CATCHUP) == [(1, []), (2, ["candidate", "latest"])]
    shipped = len(list((project_dir / "prompts").glob("*.yaml")))
    assert len(langfuse_env.requests_to(PROMPTS, method="POST")) == shipped + 1  # one create each, one new version


def test_a_config_change_alone_is_a_new_version(
    scoregate: Cli,
    langfuse_env: FakeLangfuse,
    project_dir: Path,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> None:
    assert scoregate("prompts", "sync", HOWTO).code == 0
    edit_yaml(project_dir / "prompts" / f"{HOWTO}.yaml", lambda data: data["config"].update(temperature=0.7))
    assert table_row(scoregate("prompts", "sync", HOWTO), HOWTO)[1:3] == ["create", "v2 (new)"]
    assert langfuse_env.state.prompts[HOWTO][1]["config"]["temperature"] == 0.7
    assert CATCHUP not in langfuse_env.state.prompts


def test_label_option_labels_the_unchanged_latest_version_without_a_new_one(
    scoregate: Cli, langfuse_env: FakeLangfuse
) -> None:
    assert scoregate("prompts", "sync").code == 0
    before = len(langfuse_env.requests)
    result = scoregate("prompts", "sync", CATCHUP, "--label", "staging")
    assert table_row(result, CATCHUP)[1:3] == ["label", "v1"]
    assert writes(langfuse_env, before) == [("PATCH", f"{PROMPTS}/{CATCHUP}/versions/1")]
    assert versions(langfuse_env, CATCHUP) == [(1, ["staging", "candidate", "latest"])]


def test_the_production_label_is_refused_before_any_request(scoregate: Cli, langfuse_env: FakeLangfuse) -> None:
    result = scoregate("prompts", "sync", "--label", "production")
    assert result.code == 1
    assert "prompt sync never sets the 'production' label" in result.output
    assert langfuse_env.requests == []


def test_dry_run_prints_the_versions_it_would_create(scoregate: Cli, langfuse_env: FakeLangfuse) -> None:
    result = scoregate("prompts", "sync", "--dry-run")
    assert table_row(result, CATCHUP)[1:3] == ["create", "v1 (to create)"]
    assert "dry run: nothing written" in result.output
    assert writes(langfuse_env) == []


TEXT_PROMPT = """\
name: plain-summary
type: text
prompt: "Summarize {{title}} in {{words}} words."
config: {temperature: 0.0}
labels: [candidate]
variables: {words: 50}
"""


def test_text_prompt_is_stored_as_a_string_and_its_type_cannot_change(
    scoregate: Cli,
    langfuse_env: FakeLangfuse,
    project_dir: Path,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> None:
    path = project_dir / "prompts" / "plain-summary.yaml"
    path.write_text(TEXT_PROMPT, encoding="utf-8")
    assert scoregate("prompts", "sync", "plain-summary").code == 0
    stored = langfuse_env.state.prompts["plain-summary"][0]
    assert (stored["type"], stored["prompt"]) == ("text", "Summarize {{title}} in {{words}} words.")
    assert table_row(scoregate("prompts", "sync", "plain-summary"), "plain-summary")[1] == "unchanged"

    def to_chat(data: Any) -> None:
        data.update(type="chat", messages=[{"role": "user", "content": data.pop("prompt")}])

    edit_yaml(path, to_chat)
    before = len(langfuse_env.requests)
    result = scoregate("prompts", "sync", "plain-summary")
    assert result.code == 1
    assert "prompts/plain-summary.yaml: prompt 'plain-summary' is a text prompt in Langfuse and chat here" in (
        result.output
    )
    assert writes(langfuse_env, before) == []
