"""An experiment's production traces read from Langfuse (the fake, fed by the reference app) as `production:` says."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from scoregate.catalog.production import ProductionSpec
from scoregate.catalog.production_paths import read_fields
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.client import LangfuseSettings
from scoregate.integrations.langfuse.production_fetch import fetch_production
from scoregate.integrations.langfuse.remote import Remote
from support.fake_langfuse import FakeLangfuse
from support.production_traffic import publish_prompt, send_traffic
from support.scripted_openai import ScriptedOpenAI

MAPPING = {"input": {"title": "$.input.title", "transcript": "$.input.transcript"}}


def _spec(**filter_: Any) -> ProductionSpec:
    return ProductionSpec.model_validate({"filter": {"trace_name": "production-app", **filter_}, "mapping": MAPPING})


def _remote(fake: FakeLangfuse) -> Remote:
    return Remote(LangfuseSettings(public_key=fake.public_key, secret_key=fake.secret_key, host=fake.base_url))


def _window(hours: float = 1) -> tuple[dt.datetime, dt.datetime]:
    now = dt.datetime.now(dt.UTC)
    return now - dt.timedelta(hours=hours), now + dt.timedelta(minutes=1)


@pytest.fixture
def traffic(fake_langfuse: FakeLangfuse, scripted_server: ScriptedOpenAI) -> dict[str, list[str]]:
    """Three requests on digest v1 (production), one on v2 (canary), one from another app on v1."""
    publish_prompt(fake_langfuse)
    inputs = [{"title": f"Episode {i}", "transcript": f"Talk {i}."} for i in range(3)]
    production = send_traffic(fake_langfuse, scripted_server, inputs)
    canary = send_traffic(fake_langfuse, scripted_server, inputs[:1], label="canary")
    other = send_traffic(fake_langfuse, scripted_server, inputs[:1], trace_name="batch-job")
    return {
        "production": [r.trace_id for r in production],
        "canary": [r.trace_id for r in canary],
        "other": [r.trace_id for r in other],
    }


def test_the_labelled_versions_traces_come_back_with_what_the_mapping_reads(
    fake_langfuse: FakeLangfuse, traffic: dict[str, list[str]]
) -> None:
    fetched = fetch_production(_remote(fake_langfuse), _spec(), "digest", _window())
    assert fetched.prompt == "digest@1"
    assert sorted(t.trace_id for t in fetched.traces) == sorted(traffic["production"])
    assert all(t.prompt == "digest@1" for t in fetched.traces)
    inputs = sorted(read_fields(t.document, _spec().mapping.paths())[0]["input.title"] for t in fetched.traces)
    assert inputs == ["Episode 0", "Episode 1", "Episode 2"]
    assert all(isinstance(t.document["output"], str) and t.document["output"] for t in fetched.traces)
    sent = fake_langfuse.requests_to("/api/public/v2/observations")
    filters = [json.loads(r.query["filter"]) for r in sent]
    assert {"type": "number", "column": "promptVersion", "operator": "=", "value": 1} in filters[0]


def test_a_version_tags_environment_and_window_select_as_the_filter_says(
    fake_langfuse: FakeLangfuse, traffic: dict[str, list[str]]
) -> None:
    remote = _remote(fake_langfuse)
    by_version = fetch_production(remote, _spec(prompt={"version": 2}), "digest", _window())
    assert [t.trace_id for t in by_version.traces] == traffic["canary"]
    any_version = fetch_production(remote, _spec(prompt={"label": None}), "digest", _window())
    assert len(any_version.traces) == 4
    assert fetch_production(remote, _spec(tags=["beta"]), "digest", _window()).traces == []
    assert fetch_production(remote, _spec(environment="staging"), "digest", _window()).traces == []
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1), dt.datetime.now(dt.UTC) + dt.timedelta(hours=2))
    assert fetch_production(remote, _spec(), "digest", later).traces == []
    assert len(fetch_production(remote, _spec(), "digest", _window(), limit=2).traces) == 2


def test_a_label_without_a_version_is_a_clear_error(fake_langfuse: FakeLangfuse, traffic: dict[str, list[str]]) -> None:
    with pytest.raises(ScoregateError, match="no version of prompt 'digest' labelled 'gold'"):
        fetch_production(_remote(fake_langfuse), _spec(prompt={"label": "gold"}), "digest", _window())


def test_a_trace_without_the_mapped_field_is_read_as_missing(
    fake_langfuse: FakeLangfuse, scripted_server: ScriptedOpenAI
) -> None:
    publish_prompt(fake_langfuse)
    send_traffic(fake_langfuse, scripted_server, [{"title": "Only a title", "transcript": "x"}])
    fetched = fetch_production(_remote(fake_langfuse), _spec(), "digest", _window())
    paths = {**_spec().mapping.paths(), "input.speaker": "$.input.speaker"}
    found, missing = read_fields(fetched.traces[0].document, paths)
    assert missing == ["input.speaker"]
    assert found["input.title"] == "Only a title"
