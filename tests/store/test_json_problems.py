"""Every reader of a JSON or JSONL file says in words what is wrong with a broken line, and where: never `json`'s
own jargon ("Invalid control character at at column 201", "Expecting ',' delimiter: line 1 column 9 (char 8)")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoregate.app.calibration_sources import iter_records
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.scores_file import read_feedback
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RESULTS, DamagedResults, DamagedRun, RunStore, read_run_json
from scoregate.tracks.extraction.sgd import load_sgd
from scoregate.tracks.tags.dataset import tags_item
from scoregate.tracks.tags.gold import read_gold

CUT_OFF = '{"trace_id": "t1", "key": "online_thumb", "comment": "half a sen'
SAYS_CUT_OFF = "not valid JSON: the line ends at column 64 inside an unclosed string (was it cut off?)"


def no_jargon(message: str) -> None:
    assert " at at " not in message and "Expecting" not in message and "(char " not in message, message


def test_a_cut_off_line_of_results_jsonl_is_named_in_words(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "runs", "r1", {"receipts": {}})
    store.append(ItemResult(index=0, item_id="a", prompt="p@1", input={"text": "t"}, output="o", scores=[]))
    store.close()
    with (store.directory / RESULTS).open("a", encoding="utf-8") as handle:
        handle.write('{"index": 1, "item_id": "b", "output": "half\n{"index": 2, "item_id": "c", "output": "whole"}\n')

    with pytest.raises(DamagedResults) as error:
        list(store.iter_results())

    message = error.value.render()
    assert f"{store.directory / RESULTS}:2: damaged result record (not valid JSON: the line ends at column" in message
    assert "inside an unclosed string (was it cut off?))" in message
    no_jargon(message)


def test_a_truncated_run_file_says_where_it_ends(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text('{\n  "scores": {\n    "word_count": {"mean": 1', encoding="utf-8")

    with pytest.raises(DamagedRun) as error:
        read_run_json(path)

    message = error.value.render()
    assert f"{path}:3:28: damaged run file (truncated or overwritten): not valid JSON: the file ends before" in message
    no_jargon(message)


def test_a_broken_row_of_a_scores_file_is_named_in_words(tmp_path: Path) -> None:
    path = tmp_path / "feedback.jsonl"
    path.write_text(CUT_OFF + "\n" + '{"trace_id": "t1" "key": "k"}\n', encoding="utf-8")

    with pytest.raises(ScoregateError) as error:
        read_feedback(path)

    message = error.value.render()
    assert f"{path}:1: {SAYS_CUT_OFF}" in message
    assert f'{path}:2: not valid JSON: a comma is missing at column 19 (or a " inside a string' in message
    no_jargon(message)


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_broken_calibration_score_file_is_named_in_words(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"scores{suffix}"
    path.write_text(CUT_OFF + "\n" if suffix == ".jsonl" else "[\n" + CUT_OFF + "\n", encoding="utf-8")

    with pytest.raises(ScoregateError) as error:
        list(iter_records(path))

    message = error.value.render()
    if suffix == ".jsonl":
        assert message.startswith(f"{path}:1: {SAYS_CUT_OFF}"), message
    else:
        assert message.startswith(f"{path}: not valid JSON: the file ends at line 2, column 64 inside an unclosed")
    no_jargon(message)


def test_a_broken_line_of_the_sgd_file_is_named_in_words(tmp_path: Path) -> None:
    path = tmp_path / "sgd_extraction.jsonl"
    path.write_text(json.dumps({"id": "x"})[:-1] + ",\n", encoding="utf-8")

    with pytest.raises(ScoregateError) as error:
        list(load_sgd(path))

    message = error.value.render()
    assert message.startswith(f"{path}:1: not valid JSON: the line ends at column 11 before the JSON value"), message
    no_jargon(message)


def test_a_broken_gold_file_and_transcript_are_named_in_words(tmp_path: Path) -> None:
    gold = tmp_path / "s-1_gold.json"
    gold.write_text('{"schema_version": 1,\n  "sample_id": "s-1",}\n', encoding="utf-8")
    transcript = tmp_path / "s-1.json"
    transcript.write_text('{"segments": [\n  {"id": 1, "speaker": "A", "text": \'hi\'}]}\n', encoding="utf-8")

    _, violations = read_gold(gold)
    with pytest.raises(ScoregateError) as error:
        tags_item(transcript, tmp_path)

    assert [v.render() for v in violations] == [
        f"{gold}: line 2: not valid JSON: a comma before the }} at line 2, column 22 has nothing after it "
        "(JSON allows no trailing comma)"
    ]
    assert error.value.render() == (
        f"{transcript}:2: not valid JSON: a string in single quotes at line 2, column 37 (JSON needs double quotes)"
    )
