"""The double's v2 observations page by cursor as Langfuse's API does (limit 1..1000, default 50; `meta.cursor`
only while more rows remain), so the traffic a rule would score is counted whole and a full last page is exact."""

from __future__ import annotations

import httpx
import pytest

from scoregate.integrations.langfuse import evaluators_rules
from scoregate.integrations.langfuse.client import LangfuseSettings
from scoregate.integrations.langfuse.evaluators_api import EvaluatorsApi
from scoregate.integrations.langfuse.evaluators_rules import RulePlan, count_traffic
from support.fake_langfuse import FakeLangfuse
from support.live_traces import send_trace

OBSERVATIONS = "/api/public/v2/observations"


def test_observations_page_by_cursor_until_the_last_page_and_refuse_a_bad_page() -> None:
    with FakeLangfuse(server_mode="new") as fake:
        for number in range(5):
            send_trace(fake, f"t{number}", age_days=number / 100)
        with httpx.Client(base_url=fake.base_url, auth=(fake.public_key, fake.secret_key)) as http:
            pages, params = [], {"limit": "2"}
            while True:
                answer = http.get(OBSERVATIONS, params=params).json()
                pages.append([row["id"] for row in answer["data"]])
                if "cursor" not in answer["meta"]:
                    break
                params["cursor"] = answer["meta"]["cursor"]
            default = http.get(OBSERVATIONS).json()
            too_many = http.get(OBSERVATIONS, params={"limit": "1001"})
            bad = http.get(OBSERVATIONS, params={"cursor": "not-a-cursor"})

    assert [len(page) for page in pages] == [2, 2, 1]
    ids = [row for page in pages for row in page]
    assert len(set(ids)) == 5 and ids == [row["id"] for row in default["data"]]  # newest first, none twice
    assert "cursor" not in default["meta"]
    assert too_many.status_code == bad.status_code == 400


@pytest.mark.parametrize(("traces", "capped"), [(4, False), (5, False)])
def test_a_full_last_page_of_traffic_is_an_exact_count_not_at_least(
    traces: int, capped: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evaluators_rules, "TRAFFIC_PAGE", 2)
    with FakeLangfuse(server_mode="new") as fake:
        for number in range(traces):
            send_trace(fake, f"t{number}")
        api = EvaluatorsApi(LangfuseSettings(fake.public_key, fake.secret_key, fake.base_url))
        plan = RulePlan("r [scoregate]", "create", True, 1.0, [])
        count_traffic(api, plan)
        api.close()

    assert plan.traces_per_day == pytest.approx(traces / 7) and plan.capped is capped


def test_traffic_beyond_the_pages_read_is_at_least(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluators_rules, "TRAFFIC_PAGE", 2)
    monkeypatch.setattr(evaluators_rules, "TRAFFIC_PAGES", 2)
    with FakeLangfuse(server_mode="new") as fake:
        for number in range(5):
            send_trace(fake, f"t{number}")
        api = EvaluatorsApi(LangfuseSettings(fake.public_key, fake.secret_key, fake.base_url))
        plan = RulePlan("r [scoregate]", "create", True, 1.0, [])
        count_traffic(api, plan)
        api.close()

    assert plan.traces_per_day == pytest.approx(4 / 7) and plan.capped is True
