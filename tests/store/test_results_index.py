"""The index of results.jsonl: the newest record of each item wins, whatever shape a line has and however ids hash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoregate.store import results_index
from scoregate.store.records import ItemResult, Score
from scoregate.store.run_store import RESULTS, DamagedResults, RunStore


def result(index: int, item_id: str, value: float, *, repeat: int = 1, **extra: Any) -> ItemResult:
    return ItemResult(
        index=index, item_id=item_id, prompt="p@1", input={"text": f"t{index}", **extra}, output=f"out {value}",
        scores=[Score("s", value, "numeric", "ev")], repeat=repeat,
    )  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore.create(tmp_path / "runs", "r1", {"receipts": {}})


def values(results: Any) -> list[tuple[str, Any]]:
    return [(r.item_id, r.scores[0].value) for r in results]


def test_the_newest_record_of_each_item_wins_in_file_and_in_dataset_order(store: RunStore) -> None:
    for r in (result(2, "c", 1), result(0, "a", 1), result(1, "b", 1), result(0, "a", 2), result(5, "z", 1)):
        store.append(r)
    store.append(result(1, "b", 3))  # a retry, written last
    store.close()

    assert values(store._newest(repeats=False)) == [("c", 1), ("a", 2), ("z", 1), ("b", 3)]  # file order (resume)
    assert values(store.iter_results()) == [("a", 2), ("b", 3), ("c", 1), ("z", 1)]
    assert values(store.ordered_results().at([3, 0])) == [("z", 1), ("a", 2)]


def test_repeats_are_their_own_records_and_iter_results_keeps_repeat_one(store: RunStore) -> None:
    for r in (result(0, "a", 1), result(0, "a", 5, repeat=2), result(1, "b", 1), result(0, "a", 6, repeat=2)):
        store.append(r)
    store.close()

    assert values(store.iter_results()) == [("a", 1), ("b", 1)]
    assert [(r.item_id, r.repeat, r.scores[0].value) for r in store.iter_all_records()] == [
        ("a", 1, 1), ("b", 1, 1), ("a", 2, 6),
    ]  # fmt: skip


def test_lines_in_other_shapes_are_parsed_whole(store: RunStore) -> None:
    path = store.directory / RESULTS
    store.append(result(0, 'q"uo\\te', 1))  # escaped id
    store.append(result(1, "nested", 1, repeat=1, extra={"repeat": 9, "stages": {}}))  # a nested "repeat" key
    store.close()
    with path.open("a", encoding="utf-8") as handle:  # written by another tool: other key order and spacing
        record = result(2, "other", 1).to_json_dict()
        handle.write(json.dumps(dict(reversed(list(record.items()))), separators=(",", ":")) + "\n")
        record = result(0, 'q"uo\\te', 7).to_json_dict()
        handle.write(json.dumps({"item_id": record["item_id"], **record}, indent=None) + "\n")

    assert values(store.iter_results()) == [('q"uo\\te', 7), ("nested", 1), ("other", 1)]


def test_ids_that_share_a_hash_stay_apart(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results_index, "_hash", lambda key: 42)
    for r in (result(0, "a", 1), result(1, "b", 1), result(0, "a", 2), result(2, "c", 1)):
        store.append(r)
    store.close()

    assert values(store.iter_results()) == [("a", 2), ("b", 1), ("c", 1)]


def test_a_line_that_is_not_a_record_is_named_with_its_line(store: RunStore) -> None:
    store.append(result(0, "a", 1))
    store.close()
    with (store.directory / RESULTS).open("a", encoding="utf-8") as handle:
        handle.write("not json\n")

    with pytest.raises(DamagedResults) as error:
        list(store.iter_results())
    assert error.value.line == 2


@pytest.mark.parametrize("block", [7, 300, 1 << 18])
def test_lines_cut_by_the_read_blocks_index_as_whole_lines(
    store: RunStore, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(results_index, "BLOCK", block)  # smaller than a line, a few lines, the whole file
    for r in (result(2, "c", 1), result(0, "a", 1), result(1, 'q"b', 1), result(0, "a", 2)):
        store.append(r)
    store.close()
    path = store.directory / RESULTS
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(result(3, "d", 1).to_json_dict())[:40])  # a killed writer's partial last line

    assert values(store.iter_results()) == [("a", 2), ('q"b', 1), ("c", 1)]
    index = results_index.index_results(path, repeats=False)
    lines = path.read_bytes().split(b"\n")
    assert [int(n) for n in index.lines] == [1, 3, 4]
    assert all(lines[n - 1].startswith(b'{"index": ') for n in index.lines)
    assert [int(o) for o in index.offsets] == [sum(len(line) + 1 for line in lines[: n - 1]) for n in index.lines]
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\nnot json\n")  # the partial line ends, then a damaged one
    with pytest.raises(DamagedResults) as error:
        list(store.iter_results())
    assert error.value.line == 6


def index_passes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each index pass over a results.jsonl (the pass reads it unbuffered, in blocks)."""
    passes: list[str] = []
    path_open = Path.open

    def counting(path: Path, mode: str = "r", buffering: int = -1, *args: Any, **kwargs: Any) -> Any:
        if path.name == RESULTS and buffering == 0:
            passes.append(path.parent.name)
        return path_open(path, mode, buffering, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counting)
    return passes


def test_a_finished_run_indexes_its_results_once_for_its_summary_telemetry_and_report(
    project_dir: Path, scripted_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the last item the summary, the telemetry (metrics.json/csv) and the report each read the results: the
    file has not changed, so its index is made once, not three times (~12 ms each at 2,000 items)."""
    from scoregate.app import RunOptions, run_experiment

    passes = index_passes(monkeypatch)

    outcome = run_experiment(
        project_dir, "counters", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    )

    assert (outcome.store.directory / "report.html").is_file() and (outcome.store.directory / "metrics.csv").is_file()
    assert passes == [outcome.run_id]


def test_an_index_is_made_again_once_the_results_change(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(3):
        store.append(result(n, f"i{n}", 0.5))
    passes = index_passes(monkeypatch)

    assert values(store.iter_results()) == [("i0", 0.5), ("i1", 0.5), ("i2", 0.5)]
    assert [r.item_id for r in store.iter_all_records()] == ["i0", "i1", "i2"]  # the same index serves both
    store.append(result(1, "i1", 0.9))
    assert values(store.iter_results()) == [("i0", 0.5), ("i1", 0.9), ("i2", 0.5)]
    store.append(result(1, "i1", 0.7, repeat=2))
    assert [(r.item_id, r.repeat) for r in store.iter_all_records()] == [("i0", 1), ("i2", 1), ("i1", 1), ("i1", 2)]
    assert values(store.iter_results()) == [("i0", 0.5), ("i1", 0.9), ("i2", 0.5)]
    assert len(passes) == 4  # once, then after each change; repeat 2 in the file: repeat 1 alone is indexed apart
