"""Judge replies scripted for calibration runs, and the smoke items' titles (from test_calibrate_cmd)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.scripted_openai import ScriptedOpenAI, json_for_schema, markdown_summary, request_schema


def script_replies(server: ScriptedOpenAI, outputs: dict[str, str], judge: dict[str, int | None]) -> None:
    """Make the task answer `outputs[title]` (default: a markdown summary) and the judges answer per marker.

    A judge request whose text contains marker M is answered with score `judge[M]` on every 1-5 field;
    None makes the judge reply unparsable (the score is then null).
    """

    def reply(body: dict[str, Any]) -> str:
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        schema = request_schema(body)
        if schema is None:
            return next((out for title, out in outputs.items() if f"Episode title: {title}" in text), None) or (
                markdown_summary(body)
            )
        marker = next((m for m in judge if m in text), None)
        if marker is not None and judge[marker] is None:
            return "I would rather not grade this one."
        return json.dumps(json_for_schema(schema, score=judge.get(marker or "", 5)))

    server.responder = reply


def smoke_titles(project_dir: Path) -> dict[str, str]:
    """Item id → episode title of the test project's smoke items (the scripted summaries repeat the title)."""
    lines = (project_dir / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines()
    return {item["id"]: item["input"]["title"] for item in map(json.loads, lines)}
