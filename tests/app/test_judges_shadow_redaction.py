"""`judges shadow` scores green on production traces through scoregate's judge runner: the traces' personal data and
pasted keys are masked before the judge's model sees them, as `traces score` does (docs/production/index.md)."""

from __future__ import annotations

import json
from pathlib import Path

from scoregate.app.judges_shadow import score_green_on
from scoregate.scoring.kinds.llm_judge import as_llm_judge
from scoregate.tracks.project import load_project
from support.scripted_openai import ScriptedOpenAI

PERSONAL = (
    "maria.rossi@example.org",
    "+49 170 1234567",
    "DE89 3704 0044 0532 0130 00",
    "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv",
)


def test_the_judge_model_never_sees_a_traces_personal_data(project_dir: Path, scripted_server: ScriptedOpenAI) -> None:
    project = load_project(project_dir)
    spec = as_llm_judge(project.evaluators["ev_actionability_v1"])
    assert spec is not None
    trace = {
        "input": {"transcript": f"Caller {PERSONAL[0]}, phone {PERSONAL[1]}, IBAN {PERSONAL[2]}", "desired_style": "x"},
        "output": f"Summary: reach them at {PERSONAL[0]}; their key {PERSONAL[3]}",
        "metadata": {},
    }

    (value,) = score_green_on(project, spec, [("trace-1", trace)])

    assert value is not None
    sent = json.dumps([r.body for r in scripted_server.requests])
    assert "[EMAIL]" in sent and "[PHONE]" in sent
    assert not [p for p in PERSONAL if p in sent]
