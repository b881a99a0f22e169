"""The evaluator kinds of `scoring/kinds/`, one line each; a track adds its own kind (`tracks.registry`).

Each kind module holds only its file's spec and declarations: the code that scores is imported when the kind
builds its evaluator, so a run loads only the kinds it uses (see tests/cli/test_cli_startup.py).
"""

from __future__ import annotations

from typing import Any

from scoregate.catalog.evaluators import EvaluatorKind
from scoregate.scoring.kinds import counters, custom, fact_recall, llm_judge

KINDS: tuple[EvaluatorKind[Any], ...] = (
    llm_judge.KIND,
    counters.KIND,
    fact_recall.KIND,
    custom.KIND,
)
"""Every evaluator kind scoring defines; a new kind is a module beside this one and a line here."""
