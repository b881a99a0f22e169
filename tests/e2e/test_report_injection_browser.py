"""Hostile text in a report stays text in headless Chromium: with every item of the single-run page, the two-run
comparison and the three-run ranking opened, nothing runs and no element is added."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from support.headless_chromium import Chromium, find_chromium
from support.hostile_reports import ITEM, MODELS, OUTPUT, PROMPT_SHOWN, REASONING
from support.hostile_reports import hostile_runs as hostile_runs  # the fixture
from support.projects import CliResult

CHROMIUM = find_chromium()


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")
def test_nothing_hostile_runs_in_a_browser_even_with_every_item_opened(
    scoregate: Callable[..., CliResult], hostile_runs: list[str], tmp_path: Path
) -> None:
    assert CHROMIUM is not None
    with Chromium(CHROMIUM) as browser:
        for name, chosen in (("single", hostile_runs[:1]), ("comparison", hostile_runs[:2]),
                             ("ranking", hostile_runs)):  # fmt: skip
            path = tmp_path / f"{name}.html"
            assert scoregate("report", *chosen, "-o", str(path)).code == 0
            browser.open(path)
            browser.evaluate("[...document.querySelectorAll('tr.item-row')].forEach((row) => row.click())")
            opened = browser.evaluate("document.querySelectorAll('tr.detail').length")
            assert opened == 6, name
            found = browser.evaluate(
                "({pwned: typeof window.pwned, scripts: document.scripts.length,"
                " injected: document.querySelectorAll('img, iframe, [id^=injected], [onerror], [onload]').length,"
                " text: document.body.innerText})"
            )
            assert (found["pwned"], found["scripts"], found["injected"]) == ("undefined", 2, 0), name
            assert ITEM in found["text"] and REASONING in found["text"] and OUTPUT in found["text"], name
            assert MODELS[0] in found["text"] and PROMPT_SHOWN in found["text"], name
            assert browser.errors == [], name
