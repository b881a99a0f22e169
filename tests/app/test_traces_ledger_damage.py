"""The ledger of `traces score` (`.scoregate/production/EXPERIMENT/judged.jsonl`, `posted.jsonl`): a line a kill cut
short is skipped, but a line that is not a record of it (edited, another tool's, not UTF-8) is an error naming the file
and line with what to do, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoregate.app.traces_ledger import Judged, TracesLedger
from scoregate.errors import ScoregateError
from scoregate.store.records import Score


def _ledger(tmp_path: Path) -> TracesLedger:
    ledger = TracesLedger(tmp_path, "catchup")
    score = Score("quality", 4, "numeric", "ev_quality_v1")
    ledger.add_judged(Judged("t1", "2026-11-29T10:00:00Z", "ev_quality_v1", 1, [score]))
    ledger.add_posted(["s1"])
    return ledger


def test_a_line_a_kill_cut_short_is_skipped(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    with ledger.judged_path.open("a", encoding="utf-8") as out:
        out.write('{"trace_id": "t2", "judge')
    with ledger.posted_path.open("a", encoding="utf-8") as out:
        out.write('{"id": "s')
    assert list(ledger.judged()) == [("t1", "ev_quality_v1", 1)]
    assert ledger.posted() == {"s1"}


@pytest.mark.parametrize("which", ["judged", "posted"])
@pytest.mark.parametrize(
    ("line", "expected"),
    [(b"[1]", "not a line of"), (b'{"id": 5, "trace_id": 5}', "not a line of"), (b"\xff\xfe", "not UTF-8")],
)
def test_a_line_that_is_not_a_ledger_record_names_the_file_and_line(
    tmp_path: Path, which: str, line: bytes, expected: str
) -> None:
    ledger = _ledger(tmp_path)
    path = ledger.judged_path if which == "judged" else ledger.posted_path
    with path.open("ab") as out:
        out.write(line + b"\n")
    with pytest.raises(ScoregateError) as raised:
        ledger.judged() if which == "judged" else ledger.posted()
    assert raised.value.where == f"{path}:2"
    assert expected in raised.value.message
    assert "judged again" in (raised.value.hint or "") or "posted again" in (raised.value.hint or "")
