"""`scoregate judges promote NAME` / `rollback NAME`: move the live rules from blue to green and back, audited in
promotions.jsonl beside the prompt promotions.

Promote repoints every rule that runs the judge from its live (blue) evaluator to the one holding the file as it is
now (green), only when the calibration holds: the judge canary of the file as it is now (`judges shadow NAME`
runs it) is `ok`. `--force --reason` promotes anyway and says so in the record. Rollback repoints the rules back to
the evaluator the newest promotion still standing moved them from. A move is idempotent: run again after a kill,
it finishes the repointing and writes the record that is missing; never a second assignment.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from scoregate.app.promotion_log import active_promotions, append_record, promotion_history
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.evaluators_live import LiveJudge

RECORD_PREFIX = "judge "
"""How a judge's moves are named in promotions.jsonl's `prompt` column (`judge ev_actionability_v1`)."""
LIVE_LABEL = "live"


@dataclass
class JudgeMove:
    """One promotion or rollback of a live judge: from which evaluator to which, in which rules, and its record."""

    action: Literal["promote", "rollback"]
    judge: str
    score_key: str
    source: list[str]
    target: str
    rules: list[str] = field(default_factory=list)
    """The rules repointed now (empty when a run before this one had already moved them)."""
    recorded: bool = False
    """Whether this call wrote the record (False: it was already there)."""
    forced: bool = False
    calibration: str = ""


def _canary_holds(project: Project, name: str) -> tuple[bool, str]:
    """Whether the judge canary of the file as it is now passed, and the line that says so."""
    from scoregate.app.calibration_runs import calibration_path, evaluator_fingerprint, read_calibrations

    spec = project.evaluators[name]
    if name not in project.config.canaries:
        return False, f"{name} has no calibration set pinned under `canaries:` in scoregate.yaml"
    path = calibration_path(project, name)
    data = read_calibrations(path) if path.is_file() else {"scores": {}}
    records = [r for r in data.get("scores", {}).values() if isinstance(r, dict)]
    canaries: list[dict[str, Any]] = [r["canary"] for r in records if isinstance(r.get("canary"), dict)]
    current = [c for c in canaries if c.get("fingerprint") == evaluator_fingerprint(spec)]
    if not current:
        return False, f"no canary of {name} as it is now: run `scoregate judges shadow {name}` first"
    drift = current[-1]["drift"]
    return drift.get("status") == "ok", f"canary {drift.get('status')}: {drift.get('detail', '')}".strip()


def _record(project: Project, move: JudgeMove, reason: str | None, undoes: str | None, host: str) -> dict[str, Any]:
    return {
        "action": move.action,
        "prompt": RECORD_PREFIX + move.judge,
        "label": LIVE_LABEL,
        "version": move.target,
        "previous_version": move.source[0] if move.source else None,
        "score_key": move.score_key,
        "rules": move.rules,
        "evidence": [],
        "failures": [],
        "judges": [],
        "forced": move.forced,
        "calibration": move.calibration,
        "reason": reason,
        "undoes": undoes,
        "user": os.environ.get("SCOREGATE_USER") or getpass.getuser(),
        "time": datetime.now(UTC).isoformat(),
        "langfuse_host": host,
        "local": False,
    }


def move_judge(
    root: Path, name: str, action: Literal["promote", "rollback"], *, force: bool = False, reason: str | None = None
) -> JudgeMove:
    """Promote the judge file's green evaluator to the live rules, or roll them back to the evaluator before."""
    from scoregate.integrations.langfuse.client import require_settings
    from scoregate.integrations.langfuse.evaluators_api import EvaluatorsApi
    from scoregate.integrations.langfuse.evaluators_body import JudgeBody
    from scoregate.integrations.langfuse.evaluators_live import live_judge, repoint
    from scoregate.integrations.langfuse.evaluators_sync import select_evaluators, wanted_body
    from scoregate.tracks.project import load_project

    if force and not (reason or "").strip():
        raise ScoregateError("--force needs --reason TEXT: say why, it is kept in promotions.jsonl")
    project = load_project(root)
    (spec,) = select_evaluators(project, [name])
    body = wanted_body(project, spec)
    if not isinstance(body, JudgeBody):
        raise ScoregateError(f"{name} does not run in Langfuse: {body}")
    history = [r for r in promotion_history(root, RECORD_PREFIX + name) if r.get("label") == LIVE_LABEL]
    api = EvaluatorsApi(require_settings())
    try:
        live = live_judge(api, body)
        if not live.rules:
            raise ScoregateError(f"no rule runs {name} in Langfuse: add it to a rule file and `scoregate judges apply`")
        last = history[-1] if history else None
        if last is not None and last["action"] == action and live.blue == [str(last["version"])]:
            # the newest move of this kind is done (a second call, or one killed after the rules had moved)
            move = JudgeMove(action, name, live.score, [str(last["previous_version"])], str(last["version"]))
            move.calibration, move.forced = str(last.get("calibration") or ""), bool(last.get("forced"))
            return move
        if last is not None and last["action"] == action and str(last["previous_version"]) in live.blue:
            # recorded, then killed or refused before every rule had moved: finish that move, record nothing new
            move = JudgeMove(action, name, live.score, [str(last["previous_version"])], str(last["version"]))
            move.calibration, move.forced = str(last.get("calibration") or ""), bool(last.get("forced"))
        else:
            move = _new_move(project, live, name, action, active_promotions(history), force)
            undoes = str(active_promotions(history)[-1]["time"]) if action == "rollback" else None
            append_record(root, _record(project, move, reason, undoes, api.host))
            move.recorded = True
        move.rules = repoint(api, live, move.source, move.target)
        return move
    finally:
        api.close()


def _new_move(
    project: Project,
    live: LiveJudge,
    name: str,
    action: Literal["promote", "rollback"],
    standing: list[dict[str, Any]],
    force: bool,
) -> JudgeMove:
    """The move to make now, once its conditions hold: green live and its canary ok, or a promotion to undo."""
    if action == "rollback":
        if not standing:
            raise ScoregateError(f"{name} has no promotion to roll back (promotions.jsonl)")
        made, before = str(standing[-1]["version"]), str(standing[-1]["previous_version"])
        if made not in live.blue:
            raise ScoregateError(f"the rules no longer run {made}, which the last promotion of {name} made live")
        return JudgeMove(action, name, live.score, [made], before, forced=force)
    if live.green is None:
        raise ScoregateError(f"{name} as it is now is not in Langfuse yet: run `scoregate judges apply` first")
    source = [e for e in live.blue if e != live.green]
    if not source:
        raise ScoregateError(f"{name} as it is now ({live.green}) is already what the rules run; nothing to promote")
    holds, line = _canary_holds(project, name)
    if not holds and not force:
        raise ScoregateError(f"{name} is not promoted: {line}; or pass `--force --reason TEXT`")
    return JudgeMove(action, name, live.score, source, live.green, forced=not holds, calibration=line)
