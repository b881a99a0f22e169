"""The HTML report in a real browser: headless Chromium opens the report of a summarization run, an
extraction run, a two-run comparison and a three-model ranking; no console error, the headline numbers
and verdicts are the runs' own, and filtering, sorting and opening items work. Screenshots go to tmp.

Skipped only when no Chromium is installed (`.ci/run` installs Debian's `chromium`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.run.experiment import RunOutcome
from scoregate.report import write_report
from support.headless_chromium import Chromium, find_chromium
from support.report_runs import extraction_runs, summarization_runs
from support.scripted_openai import ScriptedOpenAI

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Real runs (through run_experiment, scripted replies): two summarization runs, three extraction models."""
    base = tmp_path_factory.mktemp("report-runs")
    with pytest.MonkeyPatch.context() as env:
        for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "OPENAI_API_KEY"):
            env.delenv(name, raising=False)
        server = ScriptedOpenAI()
        try:
            summarization = summarization_runs(base / "summarization", server)
            extraction = extraction_runs(base / "extraction", server)
        finally:
            server.close()
        yield {"summarization": summarization, "extraction": extraction}


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    assert CHROMIUM is not None
    with Chromium(CHROMIUM) as chromium:
        yield chromium


@pytest.fixture(scope="module")
def phone() -> Iterator[Chromium]:
    """A browser as wide as a phone held upright (390 CSS pixels)."""
    assert CHROMIUM is not None
    with Chromium(CHROMIUM, width=390, height=844) as chromium:
        yield chromium


def rows(browser: Chromium) -> list[str]:
    """The item ids of the table rows shown."""
    return list(browser.evaluate("[...document.querySelectorAll('tr.item-row')].map(r => r.dataset.id)"))


def column(browser: Chromium, key: str) -> list[str]:
    """The texts of one item-table column (by its data-key), row by row as shown."""
    return list(
        browser.evaluate(
            "(() => { const heads = [...document.querySelectorAll('#items-table thead th')];"
            f" const i = heads.findIndex((th) => th.dataset.key === {key!r}); if (i < 0) return [];"
            " return [...document.querySelectorAll('tr.item-row')].map((tr) => tr.children[i].textContent); })()"
        )
    )


def shown_count(browser: Chromium) -> int:
    """How many items match the filters, as the page says."""
    text = str(browser.evaluate("document.getElementById('item-count').textContent"))
    return int(text.split(" of ", 1)[1].split(" ", 1)[0])


def type_into(browser: Chromium, element_id: str, text: str) -> None:
    """Focus an input and type `text` as a user would (clearing it first)."""
    browser.evaluate(f"(() => {{ const e = document.getElementById({element_id!r}); e.focus(); e.select(); }})()")
    browser.call("Input.insertText", text=text)


def set_control(browser: Chromium, element_id: str, value: str | bool) -> None:
    """Set a select's value or a checkbox's state and fire its change event."""
    prop = "checked" if isinstance(value, bool) else "value"
    browser.evaluate(
        f"(() => {{ const e = document.getElementById({element_id!r}); e.{prop} = {json.dumps(value)}; "
        "e.dispatchEvent(new Event('change')); })()"
    )


def headline(browser: Chromium, run: int, score: str) -> float:
    """The mean the headline table shows for a run's score."""
    text = browser.evaluate(f'document.querySelector(\'td[data-run="{run}"][data-score="{score}"] .mean\').textContent')
    return float(str(text).replace(",", ""))


def open_report(browser: Chromium, path: Path, shots: Path, name: str) -> None:
    seconds = browser.open(path)
    assert seconds < 10
    assert browser.errors == [], browser.errors
    browser.screenshot(shots / f"{name}.png")


def assert_headline_is_the_runs(browser: Chromium, outcome: RunOutcome, position: int) -> None:
    summary = outcome.summary
    verdict = browser.evaluate(f"document.getElementById('verdict-{position}').textContent")
    assert summary["verdict"].upper().replace("_", " ") in verdict
    assert browser.evaluate(f"document.getElementById('verdict-{position}').dataset.run") == outcome.run_id
    checked = 0
    for name, stats in summary["scores"].items():
        if stats["data_type"] in ("numeric", "boolean") and stats.get("mean") is not None:
            assert headline(browser, position, name) == pytest.approx(stats["mean"], rel=5e-3, abs=1e-9), name
            checked += 1
    assert checked >= 5


def test_a_summarization_runs_report(
    outcomes: dict[str, Any], browser: Chromium, tmp_path: Path
) -> None:  # fmt: skip
    run = outcomes["summarization"][0]
    assert run.report == run.store.directory / "report.html"
    open_report(browser, run.report, tmp_path, "summarization")
    assert_headline_is_the_runs(browser, run, 0)
    ids = [r.item_id for r in sorted(run.store.iter_results(), key=lambda r: r.index)]
    assert rows(browser) == ids
    numbers = browser.evaluate("[...document.querySelectorAll('tr.item-row')].map(r => r.cells[0].textContent)")
    assert numbers == [str(k) for k in range(1, len(ids) + 1)]  # counted from 1, as a person counts
    bars = browser.evaluate(
        "[...document.querySelectorAll('svg[aria-label=\"histogram of faithfulness_score\"] rect title')]"
        ".map(t => t.textContent.split(':')[0])"
    )
    assert bars == ["1", "2", "3", "4", "5"]  # the judge's whole 1-5 scale, absent values at zero height
    assert browser.evaluate("document.getElementById('item-table').classList.contains('wide')") is False
    assert browser.evaluate("getComputedStyle(document.querySelector('table.items th')).position") == "sticky"

    type_into(browser, "filter-text", "Ledgerly")  # a word of one item's transcript only
    assert rows(browser) == ["smoke-002"]
    type_into(browser, "filter-text", "no such words anywhere")
    assert rows(browser) == [] and shown_count(browser) == 0
    browser.evaluate("document.getElementById('filter-reset').click()")
    assert len(rows(browser)) == len(ids)

    browser.evaluate("document.querySelector('th[data-key=\"l0\"]').click()")  # sort by latency, slowest first
    latency = {r.item_id: r.task_call.latency_ms for r in run.store.iter_results() if r.task_call}
    assert rows(browser) == sorted(ids, key=lambda i: -(latency[i] or 0))

    browser.evaluate("document.querySelector('tr.item-row[data-id=\"smoke-002\"]').click()")
    opened = str(browser.evaluate("document.querySelector('tr.detail').innerText"))
    assert "Ledgerly" in opened and "faithfulness_score" in opened and "judge:ev_faithfulness_v1" in opened
    assert browser.errors == []
    browser.screenshot(tmp_path / "summarization-item.png")


def test_an_extraction_runs_report_shows_the_tracks_breakdowns_and_filters(
    outcomes: dict[str, Any], browser: Chromium, tmp_path: Path
) -> None:
    run = outcomes["extraction"][0]  # the careless model: failed replies, omissions, fabrications
    open_report(browser, run.report, tmp_path, "extraction")
    assert_headline_is_the_runs(browser, run, 0)
    section = str(browser.evaluate("document.getElementById('extraction').innerText"))
    assert "fields by match category" in section and "By schema complexity" in section
    assert (
        "hallucinated fields by severity" in section and run.summary["extraction"]["recommendation"]["text"] in section
    )

    results = list(run.store.iter_results())
    failed = {r.item_id for r in results if r.error is not None}
    assert failed
    set_control(browser, "filter-failed", True)
    assert set(rows(browser)) == failed
    set_control(browser, "filter-failed", False)

    eqs = {r.item_id: r.score("eqs").value for r in results}  # type: ignore[union-attr]
    set_control(browser, "filter-score", "eqs")
    type_into(browser, "filter-max", "0.5")
    assert shown_count(browser) == sum(v is not None and v <= 0.5 for v in eqs.values()) > 0
    type_into(browser, "filter-max", "")

    gates = run.summary["gates"]
    k = next(i for i, g in enumerate(gates) if g["metric"] == "schema_valid")
    set_control(browser, "filter-gate", f"0:{k}")
    broken = {r.item_id for r in results if r.score("schema_valid").value == 0}  # type: ignore[union-attr]
    assert set(rows(browser)) == broken and broken
    assert browser.errors == []


def test_a_two_run_comparison_report(outcomes: dict[str, Any], browser: Chromium, tmp_path: Path) -> None:
    a, b = outcomes["summarization"]
    path = write_report([a.store, b.store], tmp_path / "comparison.html")
    open_report(browser, path, tmp_path, "comparison")
    assert_headline_is_the_runs(browser, a, 0)
    assert_headline_is_the_runs(browser, b, 1)
    section = str(browser.evaluate("document.getElementById('comparison').innerText"))
    assert "W/T/L" in section and "WeightedQuality" in section
    assert "B vs A on 6 shared items" in str(
        browser.evaluate("document.getElementById('comparison-verdict').innerText")
    )
    for position, run in enumerate((a, b)):  # gates broken per run: never a sum over both runs' gates
        broken = [int(x) for x in column(browser, f"g{position}")]
        assert len(broken) == 6 and max(broken) <= len(run.summary["gates"]), (position, broken)
    assert max(int(x) for x in column(browser, "g1")) > 0  # B's judges give 3s: it breaks gates on its own items
    assert "g" not in browser.evaluate("[...document.querySelectorAll('#items-table th')].map(th => th.dataset.key)")

    browser.evaluate("document.getElementById('sort-changed').click()")
    first = rows(browser)[0]
    browser.evaluate(f"document.querySelector('tr.item-row[data-id=\"{first}\"]').click()")
    deleted = browser.evaluate("[...document.querySelectorAll('tr.detail del')].map(d => d.textContent).join('')")
    inserted = browser.evaluate("[...document.querySelectorAll('tr.detail ins')].map(d => d.textContent).join('')")
    assert "References" in deleted and "listening." in inserted  # B dropped the references and signed off
    assert browser.errors == []
    browser.screenshot(tmp_path / "comparison-item.png")


def test_a_three_model_ranking_report(outcomes: dict[str, Any], browser: Chromium, tmp_path: Path) -> None:
    runs = outcomes["extraction"]
    path = write_report([r.store for r in runs], tmp_path / "ranking.html")
    open_report(browser, path, tmp_path, "ranking")
    for position, run in enumerate(runs):
        assert_headline_is_the_runs(browser, run, position)
    ranking = str(browser.evaluate("document.getElementById('ranking').innerText"))
    assert "Ranking by eqs" in ranking and "Pareto fronts" in ranking
    assert browser.evaluate("document.querySelectorAll('#ranking svg circle').length") == 6  # 3 runs x 2 charts
    best = max(runs, key=lambda r: r.summary["scores"]["eqs"]["mean"])
    assert f"Best by eqs (higher is better): {best.summary['model']}" in str(
        browser.evaluate("document.getElementById('comparison-verdict').innerText")
    )
    set_control(browser, "filter-differ", True)
    assert 0 < shown_count(browser) < len(list(runs[0].store.iter_results()))
    assert browser.errors == []


def off_screen(browser: Chromium, selector: str) -> list[str]:
    """The texts of the elements matching `selector` that a reader cannot see without scrolling sideways."""
    return list(
        browser.evaluate(
            f"[...document.querySelectorAll({selector!r})].filter(e => e.getBoundingClientRect().right > "
            "window.innerWidth).map(e => e.textContent)"
        )
    )


def test_reports_fit_a_phone_wide_tables_scroll_in_their_own_box(
    outcomes: dict[str, Any], phone: Chromium, tmp_path: Path
) -> None:
    a, b = outcomes["summarization"]
    pages = {
        "run": a.report,
        "comparison": write_report([a.store, b.store], tmp_path / "comparison.html"),
        "extraction": outcomes["extraction"][0].report,
        "ranking": write_report([r.store for r in outcomes["extraction"]], tmp_path / "ranking.html"),
    }
    for name, path in pages.items():
        open_report(phone, path, tmp_path, f"{name}-390")
        width, seen = phone.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert seen == 390 and width <= seen, f"{name}: the page scrolls sideways ({width} px wide)"
        assert phone.evaluate("getComputedStyle(document.querySelector('.table-wrap')).overflowX") == "auto"
        assert phone.evaluate("document.getElementById('item-table').classList.contains('wide')"), name
        # what each table is about stays in view: a gate's status, a comparison's verdict, an item's status
        assert phone.evaluate("document.querySelectorAll('table.gates td.ok, table.gates td.bad').length") > 0
        assert off_screen(phone, "table.gates tbody td:nth-child(2)") == [], name
        assert off_screen(phone, "#comparison tbody td:nth-child(2)") == [], name
        status = phone.evaluate("[...document.querySelectorAll('table.items th')].findIndex(th => "
                                "th.textContent.endsWith('status')) + 1")  # fmt: skip
        assert status > 0 and off_screen(phone, f"tr.item-row td:nth-child({status})") == [], name
        assert phone.errors == []
