"""The fake Langfuse server answers as the recorded real server (v4.16) does, and the real SDK works against it."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import gzip
import json
import time
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.protobuf import json_format
from langfuse import Evaluation, Langfuse, propagate_attributes
from langfuse.api import DatasetStatus
from langfuse.api.core.api_error import ApiError
from langfuse.experiment import LocalExperimentItem
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.fake_langfuse.endpoints import OLD_SERVER_ARRAY_ERROR

SDK_MAJOR = int(version("langfuse").split(".")[0])
# SDK 5 posts score batches to /api/public/scores; SDK 4 sends score-create events to /api/public/ingestion.
SCORE_PATH = "/api/public/scores" if SDK_MAJOR >= 5 else "/api/public/ingestion"
RECORDINGS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "langfuse-recordings"
CONFIGS_RECORDING = "langfuse-v4.16-configs-dashboards.jsonl"
RECORDED_FILES = ["langfuse-v4.16-sdk4.jsonl", "langfuse-v4.16-sdk5.jsonl", CONFIGS_RECORDING]
# Reads of a whole trace (SDK 4's `api.trace.get`) are not served: scoregate never reads traces back.
NOT_SERVED = ("/api/public/traces/",)
# Response keys whose values the server derives from the requests alone, so the fake must repeat them exactly.
EXACT_KEYS = {
    "name",
    "version",
    "labels",
    "tags",
    "type",
    "prompt",
    "config",
    "isActive",
    "commitMessage",
    "createdBy",
    "status",
    "input",
    "expectedOutput",
    "metadata",
    "datasetName",
    "datasetRunName",
    "description",
    "message",
    "value",
    "dataType",
    "stringValue",
    "comment",
    "source",
    "environment",
    "userId",
    "sessionId",
    "level",
    "isRootObservation",
    "code",
    "keys",
    "expected",
    "path",
    "publicKey",
    "sdkName",
    "sdkVersion",
    "page",
    "limit",
}


def _kind(value: Any) -> str:
    """Name a JSON value's type (ints and floats are both numbers)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return {type(None): "null", str: "str", dict: "object", list: "array"}[type(value)]


def _strings(value: Any) -> Iterator[str]:
    """Yield every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


class Replay:
    """Replays recorded exchanges against a fake and compares the answers with the recorded ones.

    Server-made ids (datasets, prompts, runs) differ between servers, so the first time a recorded id meets
    the fake's, the pair is learnt: later requests are rewritten with the fake's id, and later answers must
    use it consistently. Ids the client sent itself must come back unchanged.
    """

    def __init__(self, fake: FakeLangfuse) -> None:
        self.fake = fake
        self.http = httpx.Client(base_url=fake.base_url, timeout=10)
        self.ids: dict[str, str] = {}
        self.sent: set[str] = set()

    def _rewrite(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.ids.get(value, value)
        if isinstance(value, dict):
            return {k: self._rewrite(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._rewrite(v) for v in value]
        return value

    def send(self, request: dict[str, Any]) -> httpx.Response:
        """Send one recorded request, with the fake's keys standing in for the redacted ones."""
        headers = {
            k: v
            for k, v in request["headers"].items()
            if k in ("content-type", "content-encoding") or k.startswith("x-langfuse")
        }
        if request["headers"].get("authorization"):  # None: the request was sent without credentials
            # the configs/dashboards recording has no x-rec-auth-kind: its credentials were valid
            valid = request["headers"].get("x-rec-auth-kind", "valid-test-credentials") == "valid-test-credentials"
            secret = self.fake.secret_key if valid else "sk-lf-wrong"
            headers["authorization"] = "Basic " + base64.b64encode(f"{self.fake.public_key}:{secret}".encode()).decode()
        params = self._rewrite(request.get("query_parsed") or {})
        path = "/".join(self._rewrite(part) for part in request["path"].split("/"))
        content: bytes | None = None
        if "body_raw_b64" in request:
            content = base64.b64decode(request["body_raw_b64"])
            if headers.get("content-encoding") == "gzip":
                content = gzip.compress(content)
            for span in request["otlp_spans_summary"]:
                self.sent.update((span["traceId"], span["spanId"]))
        elif request.get("body") is not None:
            content = json.dumps(self._rewrite(request["body"])).encode()
            headers.setdefault("content-type", "application/json")
        self.sent.update(_strings([request.get("body"), request.get("query_parsed"), request["path"].split("/")]))
        return self.http.request(request["method"], path, params=params, headers=headers, content=content)

    def compare(self, recorded: Any, actual: Any, where: str, key: str = "") -> list[str]:
        """List the differences that matter between a recorded answer and the fake's."""
        if _kind(recorded) != _kind(actual):
            return [f"{where}: recorded {_kind(recorded)}, fake {_kind(actual)}"]
        if isinstance(recorded, dict):
            problems = (
                [
                    f"{where}: keys differ: missing {sorted(set(recorded) - set(actual))}, "
                    f"extra {sorted(set(actual) - set(recorded))}"
                ]
                if set(recorded) != set(actual)
                else []
            )
            for k in recorded.keys() & actual.keys():
                problems += self.compare(recorded[k], actual[k], f"{where}.{k}", k)
            return problems
        if isinstance(recorded, list):
            return self._compare_lists(recorded, actual, where, key)
        if isinstance(recorded, str) and (key == "id" or key.endswith("Id")) and len(recorded) >= 8:
            return self._compare_id(recorded, actual, where)
        if key in EXACT_KEYS and recorded != actual:
            return [f"{where}: recorded {recorded!r}, fake {actual!r}"]
        return []

    def _compare_id(self, recorded: str, actual: str, where: str) -> list[str]:
        if recorded == actual:
            return []
        if recorded in self.ids:
            return [] if self.ids[recorded] == actual else [f"{where}: id {actual} is not {self.ids[recorded]}"]
        if recorded in self.sent:
            return [f"{where}: the client's id {recorded} came back as {actual}"]
        self.ids[recorded] = actual
        return []

    def _compare_lists(self, recorded: list[Any], actual: list[Any], where: str, key: str) -> list[str]:
        if not recorded:  # the recorded server had not indexed it yet (reads lag writes by seconds)
            return []
        if len(recorded) != len(actual):
            return [f"{where}: recorded {len(recorded)} elements, fake {len(actual)}"]
        if not isinstance(recorded[0], dict):
            return [] if key not in EXACT_KEYS or recorded == actual else [f"{where}: {recorded} != {actual}"]
        problems = []
        for index, element in enumerate(recorded):
            match = next(
                (
                    a
                    for a in actual
                    if any(k in element and self._rewrite(element[k]) == a.get(k) for k in ("id", "datasetItemId"))
                ),
                None,
            )
            problems += self.compare(element, match if match is not None else actual[index], f"{where}[{index}]")
        return problems


def _route(path: str) -> str:
    """A path with its server-made ids (long segments) replaced, so a recorded and a replayed path compare."""
    return "/".join("{}" if len(part) >= 20 else part for part in path.split("/"))


@pytest.mark.parametrize("recording", RECORDED_FILES)
def test_replayed_exchanges_get_the_recorded_status_and_answer_shape(recording: str) -> None:
    """Every recorded request gets the real server's status code and an answer of the same shape."""
    path = RECORDINGS / recording
    if not path.exists():
        pytest.skip(f"recordings not found at {path} (shared data is not checked out)")
    exchanges = [json.loads(line) for line in path.read_text().splitlines()]
    problems = []
    with FakeLangfuse(public_key="pk-lf-local-0000", server_mode="old") as fake:
        replay = Replay(fake)
        for exchange in exchanges:
            request, recorded = exchange["request"], exchange["response"]
            response = replay.send(request)
            where = f"line {exchange['seq']} {request['method']} {request['path']}"
            if request["path"].startswith(NOT_SERVED):
                continue
            if response.status_code != recorded["status"]:
                problems.append(f"{where}: status {response.status_code}, recorded {recorded['status']}")
                continue
            actual = response.text if isinstance(recorded["body"], str) else response.json()
            if recording == CONFIGS_RECORDING and recorded["status"] == 400:  # zod's issue lists, not pydantic's
                if set(recorded["body"]) != set(actual):
                    problems.append(f"{where}: error keys {sorted(actual)}, recorded {sorted(recorded['body'])}")
                continue
            problems += replay.compare(recorded["body"], actual, where)
        refused = {
            (e["request"]["method"], _route(e["request"]["path"])) for e in exchanges if e["response"]["status"] == 400
        }
        assert [f for f in fake.validation_failures if (f.method, _route(f.path)) not in refused] == []
    assert problems == []


# ---- the real SDK against the fake ----------------------------------------------------------------
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


def test_auth_check_passes_with_the_configured_keys(client: Langfuse, fake_langfuse: FakeLangfuse) -> None:
    assert client.auth_check() is True
    assert fake_langfuse.requests_to("/api/public/projects", status=200)


def test_auth_check_with_a_wrong_secret_gets_401_with_the_real_body(fake_langfuse: FakeLangfuse) -> None:
    langfuse = Langfuse(public_key=fake_langfuse.public_key, secret_key="sk-wrong", base_url=fake_langfuse.base_url)
    try:
        with pytest.raises(ApiError) as raised:
            langfuse.auth_check()
    finally:
        langfuse.shutdown()
    assert raised.value.status_code == 401
    assert raised.value.body == {"message": "Invalid credentials. Confirm that you've configured the correct host."}


def test_create_dataset_twice_updates_one_dataset(client: Langfuse, fake_langfuse: FakeLangfuse) -> None:
    first = client.create_dataset(name="qa", description="v1", metadata={"k": "v"})
    second = client.create_dataset(name="qa", description="v2")
    assert first.id == second.id
    assert second.description == "v2" and second.metadata == {"k": "v"}
    assert list(fake_langfuse.state.datasets) == ["qa"]


def test_dataset_item_upserted_with_the_same_id_stays_one_item(client: Langfuse, fake_langfuse: FakeLangfuse) -> None:
    client.create_dataset(name="qa")
    client.create_dataset_item(dataset_name="qa", id="item-1", input={"q": "2+2"}, expected_output="4")
    client.create_dataset_item(dataset_name="qa", id="item-1", input={"q": "3+3"}, expected_output="6")
    items = client.get_dataset("qa").items
    assert [(i.id, i.input, i.expected_output) for i in items] == [("item-1", {"q": "3+3"}, 6)]
    assert fake_langfuse.validation_failures == []


def test_archived_item_leaves_the_listing_but_can_still_be_fetched(client: Langfuse) -> None:
    client.create_dataset(name="qa")
    client.create_dataset_item(dataset_name="qa", id="keep", input=1)
    client.create_dataset_item(dataset_name="qa", id="gone", input=2)
    client.create_dataset_item(dataset_name="qa", id="gone", input=2, status=DatasetStatus.ARCHIVED)
    assert [i.id for i in client.get_dataset("qa").items] == ["keep"]
    assert client.api.dataset_items.get("gone").status == "ARCHIVED"


def test_item_id_used_in_another_dataset_is_refused(client: Langfuse) -> None:
    client.create_dataset(name="a")
    client.create_dataset(name="b")
    client.create_dataset_item(dataset_name="a", id="shared-id", input=1)
    with pytest.raises(ApiError) as raised:
        client.create_dataset_item(dataset_name="b", id="shared-id", input=1)
    assert raised.value.status_code == 404


def test_create_prompt_twice_makes_versions_1_and_2_and_moves_latest(client: Langfuse) -> None:
    first = client.create_prompt(name="summarize", prompt="Sum {{text}}", labels=["production"])
    second = client.create_prompt(name="summarize", prompt="Summarize {{text}}", labels=["candidate"])
    assert (first.version, second.version) == (1, 2)
    assert first.labels == ["production", "latest"] and second.labels == ["candidate", "latest"]
    assert client.get_prompt("summarize", cache_ttl_seconds=0).version == 1  # production by default
    assert client.get_prompt("summarize", label="latest", cache_ttl_seconds=0).version == 2


def test_update_prompt_adds_the_label_and_moves_it_off_the_other_version(client: Langfuse) -> None:
    client.create_prompt(name="p", prompt="v1", labels=["production"])
    client.create_prompt(name="p", prompt="v2", labels=["candidate"])
    client.update_prompt(name="p", version=2, new_labels=["production"])
    promoted = client.get_prompt("p", label="production", cache_ttl_seconds=0)
    assert promoted.version == 2 and promoted.labels == ["production", "candidate", "latest"]
    assert client.api.prompts.get("p", version=1).labels == []


def test_missing_prompt_is_404_with_the_real_message(client: Langfuse) -> None:
    client.create_prompt(name="p", prompt="v1", labels=["staging"])
    with pytest.raises(ApiError) as raised:
        client.api.prompts.get("p")
    assert raised.value.status_code == 404
    assert raised.value.body["message"] == "Prompt not found: 'p' with label 'production'"


def _three_scores(client: Langfuse) -> None:
    trace_id = Langfuse.create_trace_id(seed="run-1/item-1")
    client.create_score(name="accuracy", value=0.5, trace_id=trace_id, score_id="s-acc")
    client.create_score(name="quality", value="good", data_type="CATEGORICAL", trace_id=trace_id, score_id="s-q")
    client.create_score(name="passed", value=1, data_type="BOOLEAN", trace_id=trace_id, score_id="s-ok")
    client.flush()


def test_new_server_accepts_the_score_batch(client: Langfuse, fake_langfuse: FakeLangfuse) -> None:
    fake_langfuse.server_mode = "new"  # scores posted by the SDK itself: SDK 5's array needs a v4.59+ server
    _three_scores(client)
    assert sorted(s["id"] for s in fake_langfuse.state.scores) == ["s-acc", "s-ok", "s-q"]
    assert [r.status for r in fake_langfuse.requests_to(SCORE_PATH)] == [202 if SDK_MAJOR >= 5 else 207]
    assert fake_langfuse.validation_failures == []


@pytest.mark.skipif(SDK_MAJOR < 5, reason="SDK 4 sends scores to /api/public/ingestion, which old servers accept")
def test_old_server_rejects_the_score_batch_visibly(client: Langfuse, fake_langfuse: FakeLangfuse) -> None:
    fake_langfuse.server_mode = "old"
    _three_scores(client)
    rejected = fake_langfuse.requests_to("/api/public/scores", status=400)
    assert len(rejected) == 1 and rejected[0].response == OLD_SERVER_ARRAY_ERROR
    assert fake_langfuse.state.scores == []


def test_old_server_still_takes_a_single_score_object(fake_langfuse: FakeLangfuse) -> None:
    fake_langfuse.server_mode = "old"
    http = httpx.Client(base_url=fake_langfuse.base_url, auth=(fake_langfuse.public_key, fake_langfuse.secret_key))
    answer = http.post("/api/public/scores", json={"id": "raw-1", "traceId": "t" * 32, "name": "raw", "value": 1})
    assert (answer.status_code, answer.json()) == (200, {"id": "raw-1"})


@pytest.mark.parametrize(("generation", "version"), [("old", "4.16.0"), ("new", "4.59.0")])
def test_each_generation_answers_its_version_and_an_empty_array_as_its_kind_of_server(
    generation: str, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCOREGATE_FAKE_LANGFUSE", generation)  # what `make test` sets for the second pass
    with FakeLangfuse() as fake:
        http = httpx.Client(base_url=fake.base_url, auth=(fake.public_key, fake.secret_key))
        assert http.get("/api/public/health").json() == {"status": "OK", "version": version}
        empty = http.post("/api/public/scores", json=[])
    assert fake.server_mode == generation and empty.status_code == 400  # nothing stored either way
    assert (empty.json() == OLD_SERVER_ARRAY_ERROR) is (generation == "old")
    assert fake.state.scores == []


@pytest.mark.parametrize("generation", ["old", "new"])
def test_sdk5_trace_metadata_keeps_its_quotes_on_the_old_generation_only(generation: str) -> None:
    with FakeLangfuse(server_mode="old" if generation == "old" else "new") as fake:
        client = Langfuse(public_key=fake.public_key, secret_key=fake.secret_key, base_url=fake.base_url)
        with client.start_as_current_observation(name="root") as root, propagate_attributes(metadata={"m": "1"}):
            trace_id = root.trace_id
        client.shutdown()
        stored = fake.state.trace(trace_id)["metadata"]["m"]
    # recorded on v4.16: SDK 5 sends `"1"` (JSON text) and the server kept it so; SDK 4 sends 1 as it is
    quoted = SDK_MAJOR >= 5 and generation == "old"
    assert stored == ('"1"' if quoted else "1")


def test_score_is_replaced_only_when_id_name_and_day_match(client: Langfuse, fake_langfuse: FakeLangfuse) -> None:
    fake_langfuse.server_mode = "new"  # scores posted by the SDK itself: SDK 5's array needs a v4.59+ server
    day = dt.datetime(2026, 1, 5, 9, tzinfo=dt.UTC)
    trace_id = "a" * 32
    client.create_score(name="acc", value=0.1, trace_id=trace_id, score_id="s1", timestamp=day)
    client.create_score(name="acc", value=0.2, trace_id=trace_id, score_id="s1", timestamp=day + dt.timedelta(hours=3))
    client.create_score(name="acc", value=0.3, trace_id=trace_id, score_id="s1", timestamp=day + dt.timedelta(days=1))
    client.create_score(name="other", value=0.4, trace_id=trace_id, score_id="s1", timestamp=day)
    client.flush()
    stored = sorted((s["name"], s["timestamp"][:10], s["value"]) for s in fake_langfuse.state.scores)
    assert stored == [("acc", "2026-01-05", 0.2), ("acc", "2026-01-06", 0.3), ("other", "2026-01-05", 0.4)]


def test_a_score_breaking_the_server_rules_is_rejected_in_a_207(client: Langfuse, fake_langfuse: FakeLangfuse) -> None:
    fake_langfuse.server_mode = "new"  # scores posted by the SDK itself: SDK 5's array needs a v4.59+ server
    client.create_score(name="ok", value=1.0, trace_id="a" * 32)
    client.create_score(name="bad", value=0.5, data_type="BOOLEAN", trace_id="a" * 32)
    client.flush()
    assert fake_langfuse.requests_to(SCORE_PATH, status=207)
    # SDK 4 re-sends a batch whose 207 lists errors; the re-sent "ok" replaces itself (same id, name, day).
    assert {tuple(f.errors) for f in fake_langfuse.validation_failures} == {("value: a BOOLEAN score must be 0 or 1",)}
    assert [s["name"] for s in fake_langfuse.state.scores] == ["ok"]


def test_a_body_the_sdk_models_reject_is_400_and_recorded(fake_langfuse: FakeLangfuse) -> None:
    http = httpx.Client(base_url=fake_langfuse.base_url, auth=(fake_langfuse.public_key, fake_langfuse.secret_key))
    answer = http.post("/api/public/v2/datasets", json={"name": "qa", "input_schema": {}})
    assert answer.status_code == 400
    (failure,) = fake_langfuse.validation_failures
    assert failure.model == "CreateDatasetRequest" and "input_schema" in failure.errors[0]
    assert fake_langfuse.state.datasets == {}


def test_run_experiment_exports_spans_and_scores_with_experiment_attributes(
    client: Langfuse, fake_langfuse: FakeLangfuse
) -> None:
    fake_langfuse.server_mode = "new"  # scores posted by the SDK itself: SDK 5's array needs a v4.59+ server

    async def task(*, item: Any, **_: Any) -> str:
        await asyncio.sleep(0)
        with client.start_as_current_observation(
            name="llm", as_type="generation", model="m", usage_details={"input": 3, "output": 2}
        ):
            return str(eval(item["input"]))  # the items are arithmetic written by this test

    def exact(*, output: str, expected_output: str, **_: Any) -> Evaluation:
        return Evaluation(name="exact", value=float(output == expected_output))

    def mean_exact(*, item_results: list[Any], **_: Any) -> Evaluation:
        values = [e.value for r in item_results for e in r.evaluations]
        return Evaluation(name="mean_exact", value=sum(values) / len(values))

    data: list[LocalExperimentItem] = [
        {"input": "1+1", "expected_output": "2"},
        {"input": "2*3", "expected_output": "7"},
    ]
    result = client.run_experiment(
        name="arith",
        run_name="arith-run-1",
        data=data,
        task=task,
        evaluators=[exact],
        run_evaluators=[mean_exact],
        metadata={"git": "abc"},
    )
    client.flush()
    state = fake_langfuse.state
    runs = state.find_spans("experiment-item-run", langfuse__experiment__id=result.experiment_id)
    assert len(runs) == 2
    assert {s["attributes"]["langfuse.experiment.name"] for s in runs} == {"arith-run-1"}
    assert {s["attributes"]["langfuse.experiment.item.expected_output"] for s in runs} == {"2", "7"}
    generations = state.find_spans("llm", langfuse__observation__type="generation")
    assert [json.loads(s["attributes"]["langfuse.observation.usage_details"]) for s in generations] == [
        {"input": 3, "output": 2}
    ] * 2
    item_scores = sorted((s["name"], s["value"]) for s in state.scores if s["traceId"])
    assert item_scores == [("exact", 0.0), ("exact", 1.0)]
    run_scores = [(s["name"], s["value"], s["datasetRunId"]) for s in state.scores if not s["traceId"]]
    # SDK 4 posts run-evaluator scores only for runs over Langfuse dataset items; SDK 5 for local data too.
    assert run_scores == ([("mean_exact", 0.5, result.experiment_id)] if SDK_MAJOR >= 5 else [])
    assert fake_langfuse.validation_failures == []


def test_otlp_json_export_is_decoded_too(fake_langfuse: FakeLangfuse) -> None:
    export = ExportTraceServiceRequest()
    span = export.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = bytes(16 * [1]), bytes(8 * [2]), "root"
    attribute = span.attributes.add()
    attribute.key, attribute.value.string_value = "langfuse.observation.type", "span"
    http = httpx.Client(base_url=fake_langfuse.base_url, auth=(fake_langfuse.public_key, fake_langfuse.secret_key))
    answer = http.post(
        "/api/public/otel/v1/traces",
        content=json_format.MessageToJson(export),
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 200
    assert [(s["name"], s["spanId"], s["attributes"]) for s in fake_langfuse.state.spans] == [
        ("root", "02" * 8, {"langfuse.observation.type": "span"})
    ]


def test_429_with_retry_after_is_retried_and_then_succeeds(client: Langfuse, fake_langfuse: FakeLangfuse) -> None:
    fake_langfuse.fail_next("/api/public/v2/datasets", status=429, retry_after=1, times=1)
    started = time.monotonic()
    client.create_dataset(name="qa")
    assert time.monotonic() - started >= 1.0
    assert [r.status for r in fake_langfuse.requests_to("/api/public/v2/datasets")] == [429, 200]
    assert "qa" in fake_langfuse.state.datasets


def test_down_refuses_connections_until_up(client: Langfuse, fake_langfuse: FakeLangfuse) -> None:
    fake_langfuse.down()
    with pytest.raises(httpx.TransportError):
        client.api.datasets.get("qa", request_options={"max_retries": 0})
    fake_langfuse.up()
    client.create_dataset(name="qa")
    assert "qa" in fake_langfuse.state.datasets


def test_down_with_a_status_answers_it_to_everything(fake_langfuse: FakeLangfuse) -> None:
    fake_langfuse.down(status=503)
    http = httpx.Client(base_url=fake_langfuse.base_url, auth=(fake_langfuse.public_key, fake_langfuse.secret_key))
    assert http.get("/api/public/projects").status_code == 503
    fake_langfuse.up()
    assert http.get("/api/public/projects").status_code == 200


def test_reset_forgets_data_requests_and_faults(client: Langfuse, fake_langfuse: FakeLangfuse) -> None:
    client.create_dataset(name="qa")
    fake_langfuse.fail_next("/api/public", status=500, times=5)
    fake_langfuse.reset()
    assert fake_langfuse.state.datasets == {} and fake_langfuse.requests == []
    client.create_dataset(name="qa")
    assert [r.status for r in fake_langfuse.requests] == [200]
