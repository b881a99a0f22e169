"""Hostile text in a report stays text: model names, prompt names, item ids, outputs, judge reasoning and score
keys holding `</script><script>…`, `"><img onerror=…>` and the like add no element, attribute or script to the
single-run page, the two-run comparison or the three-run ranking (parsed, and in headless Chromium when there is
one: nothing runs, even with every item opened)."""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from support.headless_chromium import Chromium, find_chromium
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, json_for_schema, markdown_summary, request_schema

Edit = Callable[[Path, Callable[[Any], None]], None]


def payload(n: int) -> str:
    """Text that would run `window.pwned = n` or add an element if a page pasted it into its HTML unescaped."""
    return (
        f'</script><script>window.pwned={n}</script><!-- "><img src=x onerror=window.pwned={n}>'
        f"'><svg onload=window.pwned={n}><b id=injected{n}>"
    )


MODELS = [f"m{k}{payload(k)}" for k in (1, 2, 3)]
ITEM = payload(4)
OUTPUT = payload(5)
REASONING = payload(6)
COMPOSITE = "Q" + payload(7)
PROMPT = "summarization-catchup"
PROMPT_SHOWN = PROMPT + payload(8)  # prompt files are named safely; a stored run may still hold any name


def reply(body: dict[str, Any]) -> str:
    schema = request_schema(body)
    if schema is not None:
        return json.dumps({**json_for_schema(schema, score=4), "reasoning": REASONING})
    return markdown_summary(body) + "\n" + OUTPUT


def poison(value: Any) -> Any:
    """`value` with the stored prompt name replaced by its hostile form, in every string and key."""
    if isinstance(value, str):
        return value.replace(PROMPT, PROMPT_SHOWN)
    if isinstance(value, dict):
        return {poison(k): poison(v) for k, v in value.items()}
    if isinstance(value, list):
        return [poison(v) for v in value]
    return value


def poison_run(directory: Path) -> None:
    for name in ("manifest.json", "summary.json"):
        path = directory / name
        path.write_text(json.dumps(poison(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")
    results = directory / "results.jsonl"
    lines = [json.dumps(poison(json.loads(line))) for line in results.read_text(encoding="utf-8").splitlines()]
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")


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


@pytest.fixture
def hostile_runs(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    edit_yaml: Edit,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
) -> list[str]:
    """Three runs of the smoke experiment, one per hostile model, over hostile item ids, outputs and reasoning."""
    dataset = project_dir / "datasets" / "smoke_v1.jsonl"
    items = [json.loads(line) for line in dataset.read_text(encoding="utf-8").splitlines()]
    items[0]["id"] = ITEM
    dataset.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")

    def hostile(config: dict[str, Any]) -> None:
        scripted = config["models"].pop("scripted")
        config["models"] = {name: scripted for name in MODELS}
        config["settings"].update(model=MODELS[0], judge_model=MODELS[0])
        config["composites"][COMPOSITE] = {"weights": {"actionability_score": 1.0}}
        config["experiments"]["smoke"]["composites"].append(COMPOSITE)

    edit_yaml(project_dir / "scoregate.yaml", hostile)
    scripted_server.responder = reply
    made = []
    for model in MODELS:
        assert scoregate("run", "smoke", "--model", model, "--no-mlflow").code in (0, 3)
        made.append(runs.latest())
        poison_run(runs.root / made[-1])
    return made


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
