"""Hostile text in a report stays text: model names, prompt names, item ids, outputs, judge reasoning and score
keys holding `</script><script>…`, `"><img onerror=…>` and the like add no element, attribute or script to the
single-run page, the two-run comparison or the three-run ranking (parsed; in headless Chromium, with every item
opened, in tests/e2e/test_report_injection_browser.py)."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from html.parser import HTMLParser
from pathlib import Path

from support.hostile_reports import MODELS
from support.hostile_reports import hostile_runs as hostile_runs  # the fixture
from support.projects import CliResult


class Elements(HTMLParser):
    """Every start tag of a page with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def parsed(path: Path) -> list[tuple[str, dict[str, str | None]]]:
    parser = Elements()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser.tags


def test_hostile_names_and_texts_add_no_element_or_script_to_any_report(
    scoregate: Callable[..., CliResult], project_dir: Path, hostile_runs: list[str], tmp_path: Path
) -> None:
    pages = {}
    for name, chosen in (("single", hostile_runs[:1]), ("comparison", hostile_runs[:2]), ("ranking", hostile_runs)):
        pages[name] = tmp_path / f"{name}.html"
        assert scoregate("report", *chosen, "-o", str(pages[name])).code == 0

    for name, path in pages.items():
        tags = parsed(path)
        scripts = [attrs.get("type") for tag, attrs in tags if tag == "script"]
        assert scripts == ["application/json", None], name  # the data and the page's own script, nothing else
        assert [tag for tag, _ in tags if tag in ("img", "iframe", "object", "embed")] == [], name
        handlers = [(t, k) for t, a in tags for k in a if k.startswith("on")]
        assert handlers == [] and [a for _, a in tags if "injected" in str(a.get("id"))] == [], name
        svgs = [attrs for tag, attrs in tags if tag == "svg"]
        assert all(attrs.get("class") == "chart" for attrs in svgs), name  # only the page's own charts
    ranking = pages["ranking"].read_text(encoding="utf-8")  # the models have no price: a front leaves them out
    assert any(f"not measured for {escape(m)}" in ranking for m in MODELS)  # the note names them, as text
