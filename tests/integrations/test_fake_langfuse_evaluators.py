"""The fake Langfuse's v2 evaluators and evaluation rules: faithful bodies, versions, pages, errors, and live rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langfuse.api.client import LangfuseAPI

from support.fake_langfuse import FakeLangfuse
from support.fake_langfuse.rule_runner import judge_value
from support.live_traces import send_trace

EVALUATORS = "/api/public/v2/evaluators"
RULES = "/api/public/v2/evaluation-rules"


def judge_body(**change: Any) -> dict[str, Any]:
    """An llm_as_judge evaluator body as scoregate sends one."""
    return {
        "name": "actionability_score",
        "description": "How actionable the summary is.",
        "type": "llm_as_judge",
        "prompt": [
            {"role": "system", "content": "You are a strict evaluator."},
            {"role": "user", "content": "Grade {{summary}} against {{transcript}}."},
        ],
        "modelConfig": {"provider": "openai", "model": "gpt-4.1-mini"},
        "variableMapping": [
            {"variable": "summary", "source": "output"},
            {"variable": "transcript", "source": "input", "jsonPath": "$.transcript"},
        ],
        "outputDefinition": {"dataType": "NUMERIC", "minValue": 1, "maxValue": 5},
        **change,
    }


@pytest.fixture
def fake() -> Iterator[FakeLangfuse]:
    with FakeLangfuse(server_mode="new") as server:
        yield server


@pytest.fixture
def http(fake: FakeLangfuse) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.base_url, auth=(fake.public_key, fake.secret_key)) as client:
        yield client


def test_create_answers_201_at_version_1_and_names_are_not_unique(http: httpx.Client) -> None:
    first = http.post(EVALUATORS, json=judge_body())
    second = http.post(EVALUATORS, json=judge_body())

    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json()["version"] == second.json()["version"] == 1
    assert first.json()["id"] != second.json()["id"]
    assert first.json()["variables"] == ["summary", "transcript"]
    assert first.json()["evaluationRuleAssignments"] == []


def test_the_sdk_reads_what_the_fake_answers(fake: FakeLangfuse, http: httpx.Client) -> None:
    created = http.post(EVALUATORS, json=judge_body()).json()
    api = LangfuseAPI(base_url=fake.base_url, username=fake.public_key, password=fake.secret_key)

    read = api.evaluators.get(created["id"])

    assert (read.id, read.version, read.name) == (created["id"], 1, "actionability_score")


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (judge_body(scoreName="x"), []),
        (judge_body(modelConfig={"provider": "openai", "model": "m", "modelParams": {}}), ["modelConfig"]),
        (judge_body(outputDefinition={"dataType": "NUMERIC", "minValue": 5, "maxValue": 1}), ["outputDefinition"]),
        (judge_body(variableMapping=[{"variable": "summary", "source": "output", "jsonPath": "x"}]), None),
    ],
)
def test_a_body_the_server_does_not_take_is_400_with_the_path(
    http: httpx.Client, body: dict[str, Any], path: list[Any] | None
) -> None:
    answer = http.post(EVALUATORS, json=body)

    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid_body"
    issue = answer.json()["details"]["issues"][0]
    assert issue["path"] == (path if path is not None else ["variableMapping", 0, "jsonPath"])


def test_only_a_definition_patch_makes_a_new_version(http: httpx.Client) -> None:
    created = http.post(EVALUATORS, json=judge_body()).json()

    renamed = http.patch(f"{EVALUATORS}/{created['id']}", json={"description": "new words"}).json()
    changed = http.patch(f"{EVALUATORS}/{created['id']}", json={**judge_body(), "name": "actionability_score"}).json()
    versions = http.get(f"{EVALUATORS}/{created['id']}/versions").json()

    assert (renamed["version"], renamed["description"]) == (1, "new words")
    assert changed["version"] == 2 and changed["versionId"] != created["versionId"]
    assert [v["version"] for v in versions["data"]] == [2, 1]


def test_an_empty_patch_and_a_type_change_are_refused(http: httpx.Client) -> None:
    created = http.post(EVALUATORS, json=judge_body()).json()
    code = {"type": "code", "sourceCode": "def evaluate(): return 1", "sourceCodeLanguage": "PYTHON"}

    assert http.patch(f"{EVALUATORS}/{created['id']}", json={}).status_code == 400
    assert http.patch(f"{EVALUATORS}/{created['id']}", json=code).json()["code"] == "conflict"


def test_lists_page_by_cursor_newest_first_and_refuse_a_bad_cursor_or_limit(http: httpx.Client) -> None:
    made = [http.post(EVALUATORS, json=judge_body(name=f"e{i}")).json()["id"] for i in range(5)]

    seen, cursor = [], None
    while True:
        page = http.get(EVALUATORS, params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        seen += [row["id"] for row in page["data"]]
        cursor = page["meta"].get("cursor")
        if cursor is None:
            break

    assert sorted(seen) == sorted(made) and len(seen) == 5
    assert http.get(EVALUATORS, params={"cursor": "not-a-cursor"}).status_code == 400
    assert http.get(EVALUATORS, params={"limit": 101}).json()["code"] == "invalid_query"


def test_delete_takes_the_assignments_with_it_and_keeps_the_rule(http: httpx.Client) -> None:
    evaluator = http.post(EVALUATORS, json=judge_body()).json()
    rule = http.post(
        RULES, json={"name": "prod", "enabled": True, "evaluatorAssignments": [{"evaluatorId": evaluator["id"]}]}
    )
    assert rule.status_code == 201
    assert (
        http.get(f"{EVALUATORS}/{evaluator['id']}").json()["evaluationRuleAssignments"][0]["evaluationRuleId"]
        == (rule.json()["id"])
    )

    assert http.delete(f"{EVALUATORS}/{evaluator['id']}").json() == {"id": evaluator["id"]}
    left = http.get(f"{RULES}/{rule.json()['id']}").json()

    assert (left["evaluatorAssignments"], left["enabled"]) == ([], False)
    assert http.get(f"{EVALUATORS}/{evaluator['id']}").json()["code"] == "resource_not_found"


def test_an_enabled_rule_without_an_assignment_is_refused(http: httpx.Client) -> None:
    answer = http.post(RULES, json={"name": "r", "enabled": True, "evaluatorAssignments": []})

    assert answer.status_code == 400
    assert answer.json()["details"]["issues"][0]["path"] == ["evaluatorAssignments"]


def test_faults_answer_with_the_apis_own_bodies(fake: FakeLangfuse, http: httpx.Client) -> None:
    fake.state.evals.fail_next(429, retry_after_s=7)
    fake.state.evals.llm_providers = {"anthropic"}

    limited = http.get(EVALUATORS)
    no_connection = http.post(EVALUATORS, json=judge_body())

    assert (limited.status_code, limited.json()["code"]) == (429, "rate_limited")
    assert limited.json()["details"]["retryAfterSeconds"] == 7
    assert no_connection.status_code == 412 and "openai" in no_connection.json()["message"]


@pytest.mark.parametrize(
    "make", [lambda: FakeLangfuse(server_mode="old"), lambda: FakeLangfuse(server_version="4.16.0")]
)
def test_a_v4_16_server_has_no_v2_evaluator_api(make: Any) -> None:
    with make() as old, httpx.Client(base_url=old.base_url, auth=(old.public_key, old.secret_key)) as http:
        answer = http.get(EVALUATORS, params={"limit": 1})

    assert answer.status_code == 404
    assert answer.headers["content-type"].startswith("text/html")


def _live_scores(fake: FakeLangfuse, trace_id: str) -> list[dict[str, Any]]:
    return [s for s in fake.state.scores if s["traceId"] == trace_id and s["source"] == "EVAL"]


def test_a_rule_scores_matching_traces_with_the_latest_version_and_its_metadata(
    fake: FakeLangfuse, http: httpx.Client
) -> None:
    blue = http.post(EVALUATORS, json=judge_body()).json()
    rule = http.post(
        RULES,
        json={
            "name": "production summaries",
            "enabled": True,
            "filter": [{"type": "stringOptions", "column": "traceName", "operator": "any of", "value": ["summarize"]}],
            "evaluatorAssignments": [{"evaluatorId": blue["id"]}],
        },
    ).json()

    scored = send_trace(fake, "one")
    ignored = send_trace(fake, "two", name="chat")
    http.patch(f"{EVALUATORS}/{blue['id']}", json=judge_body(prompt="Grade {{summary}} harder."))
    after_patch = send_trace(fake, "three")

    (score,) = _live_scores(fake, scored)
    versions = {v["version"]: v for v in fake.state.evals.versions[blue["id"]]}
    assert (score["name"], score["value"]) == ("actionability_score", judge_value(scored, versions[1])[0])
    assert score["metadata"]["evaluator_version_id"] == versions[1]["id"]
    assert score["metadata"]["evaluation_rule_id"] == rule["id"]
    assert score["metadata"]["target_trace_id"] == scored
    assert _live_scores(fake, ignored) == []
    (patched,) = _live_scores(fake, after_patch)
    assert patched["metadata"]["evaluator_version_id"] == versions[2]["id"]


def test_a_second_evaluator_reaches_traffic_only_when_the_rule_points_at_it(
    fake: FakeLangfuse, http: httpx.Client
) -> None:
    blue = http.post(EVALUATORS, json=judge_body()).json()
    green = http.post(EVALUATORS, json=judge_body(prompt="Grade {{summary}} anew.")).json()
    rule = http.post(RULES, json={"name": "r", "enabled": True, "evaluatorAssignments": [{"evaluatorId": blue["id"]}]})

    before = send_trace(fake, "before")
    http.patch(f"{RULES}/{rule.json()['id']}", json={"evaluatorAssignments": [{"evaluatorId": green["id"]}]})
    after = send_trace(fake, "after")

    assert [s["metadata"]["evaluator_id"] for s in _live_scores(fake, before)] == [blue["id"]]
    assert [s["metadata"]["evaluator_id"] for s in _live_scores(fake, after)] == [green["id"]]


def test_sampling_and_a_disabled_rule_leave_traces_unscored(fake: FakeLangfuse, http: httpx.Client) -> None:
    evaluator = http.post(EVALUATORS, json=judge_body()).json()
    assignment = [{"evaluatorId": evaluator["id"]}]
    http.post(RULES, json={"name": "none", "enabled": True, "sampling": 0, "evaluatorAssignments": assignment})
    http.post(RULES, json={"name": "off", "enabled": False, "evaluatorAssignments": assignment})

    trace = send_trace(fake, "quiet")

    assert _live_scores(fake, trace) == []


def test_a_trace_shows_its_root_observations_input_and_output(fake: FakeLangfuse, http: httpx.Client) -> None:
    trace = send_trace(fake, "io", input={"transcript": "t"}, output="the summary")

    read = http.get(f"/api/public/traces/{trace}").json()

    assert (read["input"], read["output"]) == ({"transcript": "t"}, "the summary")
