"""Where each item's newest record sits in `results.jsonl`, found in one cheap pass without parsing whole lines.

A run of 100,000 items has a results file of hundreds of MB; parsing every line to learn which record is the
newest of its item (a failure later retried with `--retry-errors` leaves both) costs seconds and, kept as objects,
gigabytes. The pass here reads only the head of each line as `RunStore.append` writes it
(`{"index": N, "item_id": "...", ...}`) and its `"repeat"` key, falling back to a full parse for any line in
another shape, and keeps three integers per newest record in numpy arrays. Records are then read one at a time,
in file order or in dataset order, by seeking to their offsets.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scoregate.support.json_errors import json_problem

_HEAD = re.compile(rb'\{"index": (-?\d{1,18}), "item_id": "((?:[^"\\]|\\.)*)", ')
_REPEAT_KEY = b'"repeat": '
_REPEAT_VALUE = re.compile(rb"(\d{1,9})[,}]")
_TAIL = re.compile(rb', "repeat": (\d{1,9}), "stages": \{\}(?:, "notes": \[\])?\}\n')
"""The end of a line as scoregate writes it when the item has no pipeline stages (and no notes): its last `}` closes
the record, so this `"repeat"` is the record's own (a nested one could not be followed by the record's last keys)."""


_hash = hash
"""How a record's key is hashed (64 bits); records sharing a hash are told apart by their ids, so any hash is exact."""


class DamagedLine(ValueError):
    """A complete line of results.jsonl that is not a result record; `line` is its 1-based number."""

    def __init__(self, line: int, detail: str) -> None:
        super().__init__(detail)
        self.line = line
        self.detail = detail


def _head_key(raw: bytes, start: int = 0, end: int | None = None) -> tuple[int, bytes, int] | None:
    """(index, item id as written, repeat) from the head of the line `raw[start:end]` as scoregate writes it; None
    for any other shape. The id stays in its JSON-escaped bytes (one id is always written the same way)."""
    end = len(raw) if end is None else end
    head = _HEAD.match(raw, start, end)
    if head is None:
        return None
    first = raw.find(_REPEAT_KEY, start, end)
    if first < 0:  # no "repeat" key anywhere, so none at the top level: the default
        return int(head.group(1)), head.group(2), 1
    if first != raw.rfind(_REPEAT_KEY, start, end) or raw[first - 2 : first] != b", ":  # nested too: parse the line
        return None
    repeat = _REPEAT_VALUE.match(raw, first + len(_REPEAT_KEY), end)
    return None if repeat is None else (int(head.group(1)), head.group(2), int(repeat.group(1)))


def parse_record(raw: bytes, line: int) -> dict[str, Any]:
    """Parse one line into its record dict; raise DamagedLine when it is not a result record."""
    try:
        record = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DamagedLine(line, json_problem(exc)) from None
    except ValueError as exc:  # UnicodeDecodeError
        raise DamagedLine(line, str(exc)) from None
    if not isinstance(record, dict) or not isinstance(record.get("item_id"), str):
        raise DamagedLine(line, "not a result record")
    return record


def _key(raw: bytes, line: int, start: int = 0, end: int | None = None) -> tuple[int, bytes, int]:
    """(index, item id as written, repeat) of the line `raw[start:end]`: from its head, else by parsing it."""
    fast = _head_key(raw, start, end)
    if fast is not None:
        return fast
    record = parse_record(raw[start:end], line)
    index = record.get("index")
    written = json.dumps(record["item_id"], ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass")
    return (index if isinstance(index, int) else 0), written, int(record.get("repeat", 1) or 1)


def record_id(raw: bytes, line: int) -> tuple[str, int]:
    """(item id, repeat) of one results line, read from its head where it has scoregate's shape (no full parse)."""
    _index, written, repeat = _key(raw, line)
    return json.loads(b'"' + written + b'"'), repeat


@dataclass(frozen=True)
class ResultsIndex:
    """The newest record of each item (or each item and repeat), in file order: offsets, line numbers, indices."""

    offsets: np.ndarray
    lines: np.ndarray
    indices: np.ndarray
    other_repeats: bool = False
    """The file holds records of repeats 2..K (without them, the index of repeat 1 is the index of every repeat)."""

    def __len__(self) -> int:
        return len(self.offsets)

    def dataset_order(self) -> np.ndarray:
        """Positions of the records sorted by item index (file order among equal indices)."""
        return np.argsort(self.indices, kind="stable")


BLOCK = 1 << 18
"""Bytes read at a time by the index pass: lines are found inside the block (no object is made per line), and the
pass holds two blocks at most, whatever the size of the file."""


_last: tuple[tuple[str, int, int, int], bool, ResultsIndex] | None = None
"""The last index made, with the file's identity (path, inode, size, mtime) then: a finished run's summary, telemetry
and report read the same unchanged file, and index it once."""


def index_results(path: Path, *, repeats: bool) -> ResultsIndex:
    """Index the newest record of every item id (with `repeats`, of every (item id, repeat); else repeat 1 only).

    Complete lines only: a partial last line (a killed writer) ends the scan. Raise DamagedLine on a line
    that is neither in scoregate's shape nor a JSON record with an `item_id`. The last index is kept while the
    file is unchanged; a file with repeat 1 only has one index for both `repeats`.
    """
    global _last
    stat = path.stat()
    identity = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if _last is not None and _last[0] == identity and (_last[1] == repeats or not _last[2].other_repeats):
        return _last[2]
    index = _index_file(path, repeats=repeats)
    _last = (identity, repeats, index)
    return index


def _index_file(path: Path, *, repeats: bool) -> ResultsIndex:
    offsets, lines, indices, hashes = array("q"), array("q"), array("q"), array("q")
    other_repeats = False
    head_of, tail_of = _HEAD.match, _TAIL.search
    number, base, carry = 0, 0, b""
    with path.open("rb", buffering=0) as handle:
        while block := handle.read(BLOCK):
            data = carry + block if carry else block
            find, start = data.find, 0
            while (end := find(b"\n", start)) >= 0:
                number += 1
                head = head_of(data, start, end)
                tail = tail_of(data, max(start, end - 64), end + 1) if head is not None else None
                if head is not None and tail is not None:  # the common shape, read in two small regex matches
                    index, item_id, repeat = int(head.group(1)), head.group(2), int(tail.group(1))
                else:
                    index, item_id, repeat = _key(data, number, start, end)
                other_repeats = other_repeats or repeat != 1
                if repeats or repeat == 1:
                    offsets.append(base + start)
                    lines.append(number)
                    indices.append(max(min(index, 2**62), -(2**62)))
                    hashes.append(_hash((item_id, repeat)) if repeats else _hash(item_id))
                start = end + 1
            carry, base = data[start:], base + start
    keep = _newest(path, np.frombuffer(hashes, dtype=np.int64), offsets, repeats=repeats)
    as_array = lambda values: np.frombuffer(values, dtype=np.int64)[keep]  # noqa: E731
    return ResultsIndex(as_array(offsets), as_array(lines), as_array(indices), other_repeats)


def _newest(path: Path, hashes: np.ndarray, offsets: array[int], *, repeats: bool) -> np.ndarray:
    """Positions of the last record of each key, ascending; keys sharing a hash are told apart by their ids."""
    if hashes.size == 0:
        return np.zeros(0, dtype=np.int64)
    unique, first_from_end, counts = np.unique(hashes[::-1], return_index=True, return_counts=True)
    last = hashes.size - 1 - first_from_end
    shared = unique[counts > 1]
    if shared.size == 0:
        return np.sort(last)
    exact: dict[tuple[bytes, int], int] = {}  # a retried item, or (rarely) two ids with one hash: read their keys
    with path.open("rb") as handle:
        for position in np.flatnonzero(np.isin(hashes, shared)):
            handle.seek(offsets[position])
            _, item_id, repeat = _key(handle.readline(), 0)
            exact[(item_id, repeat if repeats else 1)] = int(position)
    single = last[counts == 1]
    return np.sort(np.concatenate([single, np.fromiter(exact.values(), dtype=np.int64, count=len(exact))]))


def read_records(
    path: Path, index: ResultsIndex, order: Iterable[int] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, record) of the indexed records, in file order or in `order` (positions in the index)."""
    positions = range(len(index)) if order is None else order
    with path.open("rb") as handle:
        for position in positions:
            line = int(index.lines[position])
            handle.seek(int(index.offsets[position]))
            yield line, parse_record(handle.readline(), line)
