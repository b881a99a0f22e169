"""The fake Langfuse lists production traffic as the SDK's API client asks for it: observations with field groups,
filters and a cursor, generations linked to prompt versions, traces (SDK 4's list), and the scores posted on them."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from importlib.metadata import version

import pytest
from langfuse import Langfuse, propagate_attributes

from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401

SDK_MAJOR = int(version("langfuse").split(".")[0])


@pytest.fixture
def client(fake_langfuse: FakeLangfuse) -> Iterator[Langfuse]:
    """An SDK client pointed at the fake."""
    langfuse = Langfuse(
        public_key=fake_langfuse.public_key,
        secret_key=fake_langfuse.secret_key,
        base_url=fake_langfuse.base_url,
        flush_interval=0.2,
    )
    yield langfuse
    langfuse.shutdown()


def _request(client: Langfuse, *, question: str, prompt_label: str, tags: list[str], environment: str) -> str:
    """Log one production request the way the reference app does: variables in, answer out, prompt linked."""
    prompt = client.get_prompt("answer", label=prompt_label, cache_ttl_seconds=0)
    with (
        client.start_as_current_observation(name="handle-request", input={"question": question}) as root,
        propagate_attributes(trace_name="support-answer", tags=tags, metadata={"channel": "web"}),
    ):
        with client.start_as_current_observation(
            name="llm",
            as_type="generation",
            model="smollm2",
            prompt=prompt,
            input=[{"role": "user", "content": question}],
        ) as generation:
            generation.update(output=f"answer to {question}")
        root.update(output={"answer": f"answer to {question}"})
        return root.trace_id


@pytest.fixture
def traffic(client: Langfuse, fake_langfuse: FakeLangfuse) -> dict[str, str]:
    """Three requests: two on prompt v1 (production), one on v2 (canary) with other tags."""
    client.create_prompt(name="answer", prompt="Answer: {{question}}", labels=["production"])
    client.create_prompt(name="answer", prompt="Answer briefly: {{question}}", labels=["canary"])
    ids = {
        "a": _request(
            client, question="How do I reset?", prompt_label="production", tags=["app"], environment="default"
        ),
        "b": _request(
            client, question="Where is my bill?", prompt_label="production", tags=["app"], environment="default"
        ),
        "c": _request(
            client, question="Cancel my plan", prompt_label="canary", tags=["app", "beta"], environment="default"
        ),
    }
    client.flush()
    return ids


def test_generations_are_listed_with_their_prompt_version_io_and_trace_context(
    client: Langfuse, traffic: dict[str, str]
) -> None:
    answer = client.api.observations.get_many(type="GENERATION", fields="core,basic,io,prompt,trace_context")
    by_trace = {o.trace_id: o for o in answer.data}
    assert set(by_trace) == set(traffic.values())
    first = by_trace[traffic["a"]]
    assert (first.prompt_name, first.prompt_version) == ("answer", 1)
    assert by_trace[traffic["c"]].prompt_version == 2
    assert first.prompt_id is not None
    assert first.output == "answer to How do I reset?"  # io comes back as the text the SDK sent
    assert first.trace_name == "support-answer"  # type: ignore[attr-defined]
    assert first.tags == ["app"]  # type: ignore[attr-defined]


def test_the_structured_filter_selects_by_prompt_version_tags_and_root(
    client: Langfuse, traffic: dict[str, str]
) -> None:
    linked = [
        {"type": "string", "column": "promptName", "operator": "=", "value": "answer"},
        {"type": "number", "column": "promptVersion", "operator": "=", "value": 1},
    ]
    answer = client.api.observations.get_many(fields="core,prompt", filter=json.dumps(linked))
    assert {o.trace_id for o in answer.data} == {traffic["a"], traffic["b"]}
    roots = [
        {"type": "boolean", "column": "isRootObservation", "operator": "=", "value": True},
        {"type": "arrayOptions", "column": "tags", "operator": "all of", "value": ["beta"]},
        {"type": "string", "column": "traceName", "operator": "=", "value": "support-answer"},
    ]
    answer = client.api.observations.get_many(fields="core,io,metadata", filter=json.dumps(roots))
    assert [o.trace_id for o in answer.data] == [traffic["c"]]
    assert json.loads(answer.data[0].input) == {"question": "Cancel my plan"}


def test_the_time_window_and_cursor_page_through_everything_once(client: Langfuse, traffic: dict[str, str]) -> None:
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    assert client.api.observations.get_many(from_start_time=later).data == []
    seen, cursor = [], None
    while True:
        page = client.api.observations.get_many(is_root_observation=True, limit=2, cursor=cursor)
        seen += [o.trace_id for o in page.data]
        cursor = page.meta.cursor
        if cursor is None:
            break
    assert sorted(seen) == sorted(traffic.values())


def test_without_fields_a_row_keeps_the_recorded_shape(client: Langfuse, traffic: dict[str, str]) -> None:
    answer = client.api.observations.get_many(trace_id=traffic["a"])
    assert answer.data and all(o.input is None and o.prompt_name is None for o in answer.data)


def test_an_unknown_field_group_or_filter_column_is_a_400(fake_langfuse: FakeLangfuse, traffic: dict[str, str]) -> None:
    import httpx

    auth = (fake_langfuse.public_key, fake_langfuse.secret_key)
    url = f"{fake_langfuse.base_url}/api/public/v2/observations"
    assert httpx.get(url, params={"fields": "core,secrets"}, auth=auth).status_code == 400
    bad = json.dumps([{"type": "string", "column": "nope", "operator": "=", "value": "x"}])
    assert httpx.get(url, params={"filter": bad}, auth=auth).status_code == 400


@pytest.mark.skipif(SDK_MAJOR >= 5, reason="SDK 5 has no trace listing (api.trace.list); it lists observations")
def test_sdk4_lists_traces_by_name_and_tag_with_the_root_input(client: Langfuse, traffic: dict[str, str]) -> None:
    answer = client.api.trace.list(name="support-answer", tags="beta")  # type: ignore[attr-defined]
    assert [t.id for t in answer.data] == [traffic["c"]]
    assert answer.data[0].input == {"question": "Cancel my plan"}


def test_scores_posted_on_a_listed_trace_are_stored_once_per_id(
    fake_langfuse: FakeLangfuse, traffic: dict[str, str]
) -> None:
    import httpx

    auth = (fake_langfuse.public_key, fake_langfuse.secret_key)
    for value in (3.0, 4.0):  # one object per POST: what every server generation takes
        body = {"id": "sc-1", "traceId": traffic["a"], "name": "quality", "value": value, "dataType": "NUMERIC"}
        answer = httpx.post(f"{fake_langfuse.base_url}/api/public/scores", json=body, auth=auth)
        assert answer.status_code == 200, answer.text
    stored = [s for s in fake_langfuse.state.scores if s["id"] == "sc-1"]
    assert [(s["traceId"], s["value"]) for s in stored] == [(traffic["a"], 4.0)]
