"""Runs whose every name and text is hostile (`</script><script>…`, `"><img onerror=…>`, …), for the report tests:
three runs of the smoke experiment, one per hostile model, over hostile item ids, outputs and reasoning."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

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
