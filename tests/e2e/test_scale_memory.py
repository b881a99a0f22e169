"""Memory and streaming at scale: what a command holds must not grow with the run's items beyond a few numbers each.

A real 6-item run (the scripted server) is repeated under new ids to SMALL and LARGE items, written as the store
writes them; tracemalloc's peak during a command at both sizes gives its growth per item (no timing: nothing here can
flake on a busy machine). The Langfuse mirror is measured where it holds its state, at the start of each chunk it
sends. `bench/scale.py` measures the same commands' peak RSS at 100,000 items.

Each measure was checked against leaks planted on purpose (a few hundred bytes kept per record read; each item's
id kept; the mirror's per-chunk garbage left to Python's collector): every one fails its test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.compare_runs import compare_runs
from scoregate.analysis.items import item_table
from scoregate.analysis.summary import RunAggregator
from scoregate.integrations.langfuse.mirror_state import STATE_FILE, ItemMirror
from scoregate.sinks.mlflow.run_mirror import mirror_run
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RESULTS, RunStore
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.langfuse_mirror import make_run
from support.projects import SCOREGATE_BIN

SMALL, LARGE = 1_000, 5_000
_SEEDS: dict[Path, list[ItemResult]] = {}


def inflate(store: RunStore, n: int, *, variant: int = 0) -> RunStore:
    """Rewrite the run's results as `n` items: its first records in turn under new ids (short inputs, varied scores),
    each line as `RunStore.append` writes it."""
    seeds = _SEEDS.setdefault(store.directory, sorted(store.iter_results(), key=lambda r: r.index))
    records = [seed.to_json_dict() for seed in seeds]
    with (store.directory / RESULTS).open("w", encoding="utf-8") as handle:
        for k in range(n):
            record = records[k % len(records)]
            scores = [
                {**score, "value": score["value"] + (k * 7 + variant) % 5}
                if isinstance(score["value"], (int, float)) and not isinstance(score["value"], bool)
                else score
                for score in record["scores"]
            ]
            line = {**record, "index": k, "item_id": f"{record['item_id']}-{k:06d}", "input": {"text": f"item {k}"},
                    "scores": scores}  # fmt: skip
            handle.write(json.dumps(line, ensure_ascii=False, allow_nan=False, default=str) + "\n")
    return store


def peak_bytes(action: Callable[[], Any]) -> int:
    """tracemalloc's peak (bytes) while `action` runs, above what was allocated when it started."""
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        action()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - start


def growth_per_item(store: RunStore, action: Callable[[], Any], *, variant: int = 0) -> float:
    """Bytes per item by which `action`'s peak grows from SMALL to LARGE items (the store is inflated to each)."""
    peaks = []
    for n in (SMALL, LARGE):
        inflate(store, n, variant=variant)
        action()  # warm at this size: imports, caches and one-time set-up are not growth
        peaks.append(peak_bytes(action))
    return (peaks[1] - peaks[0]) / (LARGE - SMALL)


@pytest.fixture
def run_store(project_dir: Path) -> RunStore:
    """A finished 6-item run of the `counters` experiment (no mirror), ready to inflate."""
    return make_run(project_dir, "counters")


def test_item_table_reads_its_first_row_without_reading_the_rest(
    run_store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    inflate(run_store, SMALL)
    parsed = [0]
    original = ItemResult.from_json_dict.__func__  # type: ignore[attr-defined]

    def counting(cls: type[ItemResult], raw: dict[str, Any]) -> ItemResult:
        parsed[0] += 1
        return original(cls, raw)

    monkeypatch.setattr(ItemResult, "from_json_dict", classmethod(counting))
    rows = iter(item_table(run_store).rows)
    first = next(rows)

    assert first.index == 0
    assert parsed[0] <= 2, f"{parsed[0]} of {SMALL} records were parsed before the first row"
    assert sum(1 for _ in rows) == SMALL - 1
    assert parsed[0] <= SMALL + 2  # each record read once


def test_runs_show_items_prints_pages_before_it_reaches_a_damaged_line_far_down(
    run_store: RunStore, project_dir: Path
) -> None:
    inflate(run_store, 2_000)
    path = run_store.directory / RESULTS
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1995] = lines[1995][:80] + "\n"  # line 1996: a valid start, then cut
    path.write_text("".join(lines), encoding="utf-8")

    shown = subprocess.run(
        [str(SCOREGATE_BIN), "runs", "show", run_store.run_id, "--items", "-C", str(project_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "400"},  # wide: this test is about streaming, not wrapping
    )

    assert shown.returncode == 1, shown.stderr
    assert "-000000" in shown.stdout and "-000999" in shown.stdout  # the pages before the damaged line
    assert f"{path}:1996: damaged result record" in " ".join(shown.stderr.split())
    assert "Traceback" not in shown.stderr


@pytest.mark.parametrize("form", [["--items"], ["--compact"], ["--items", "--json"]], ids=["table", "lines", "json"])
def test_runs_show_items_stops_quietly_when_its_reader_stops_after_the_first_line(
    run_store: RunStore, project_dir: Path, form: list[str]
) -> None:
    inflate(run_store, LARGE)  # far more than a pipe holds: the command is still writing when the reader goes
    shown = subprocess.Popen(
        [str(SCOREGATE_BIN), "runs", "show", run_store.run_id, *form, "-C", str(project_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "80"},
    )  # fmt: skip
    assert shown.stdout is not None and shown.stderr is not None

    first = shown.stdout.readline()
    shown.stdout.close()  # what `| head -1` does
    code = shown.wait(timeout=300)

    assert first.strip()
    said = shown.stderr.read().decode()
    assert (code, said) == (1, ""), said  # no traceback, no `error: Broken pipe`: status 1, as rich's tables have it


@pytest.mark.usefixtures("mlflow_store")
def test_the_mlflow_mirror_holds_no_item_in_memory(run_store: RunStore, project_dir: Path) -> None:
    growth = growth_per_item(run_store, lambda: mirror_run(run_store, project_root=project_dir))

    assert growth < 200, f"the MLflow mirror grows by {growth:.0f} bytes per item"


def test_worst_items_hold_only_the_rows_shown(run_store: RunStore) -> None:
    growth = growth_per_item(run_store, lambda: list(item_table(run_store, worst=5, by="word_count").rows))

    # ~35 bytes an item (its position and one float); keeping a few hundred bytes of each record read made it 290
    assert growth < 200, f"`runs show --worst 5` grows by {growth:.0f} bytes per item"


def test_compare_holds_ids_and_floats_not_records(run_store: RunStore, project_dir: Path) -> None:
    other = make_run(project_dir, "counters")
    peaks = []
    for n in (SMALL, LARGE):
        inflate(run_store, n)
        inflate(other, n, variant=1)
        compare_runs(run_store, other, resamples=200)  # warm
        peaks.append(peak_bytes(lambda: compare_runs(run_store, other, resamples=200)))
    growth = (peaks[1] - peaks[0]) / (LARGE - SMALL)

    assert growth < 400, f"compare grows by {growth:.0f} bytes per item of each run"


def test_diff_holds_a_few_numbers_per_item_and_reads_the_listed_ones_again(
    run_store: RunStore, project_dir: Path
) -> None:
    from scoregate.analysis.run_diff import diff_runs

    other = make_run(project_dir, "counters")
    peaks = []
    for n in (SMALL, LARGE):
        inflate(run_store, n)
        inflate(other, n, variant=1)
        listed = list(diff_runs(run_store, other, by="word_count", limit=5).items)  # warm
        peaks.append(peak_bytes(lambda: list(diff_runs(run_store, other, by="word_count", limit=5).items)))
    growth = (peaks[1] - peaks[0]) / (LARGE - SMALL)

    assert len(listed) == 5 and all(d.deltas["word_count"] for d in listed)
    assert growth < 500, f"diff grows by {growth:.0f} bytes per shared item"


def test_the_summary_keeps_one_float_per_item_and_score(run_store: RunStore) -> None:
    keys = [(s.name, s.data_type) for s in next(run_store.iter_results()).scores]

    def aggregate() -> None:
        aggregator = RunAggregator(keys)
        for result in run_store.iter_results():
            aggregator.add(result)
        aggregator.summary(resamples=200)

    growth = growth_per_item(run_store, aggregate)

    # a float and a measured flag per score (9 bytes), and room for the item's id (kept to name gate breakers)
    assert growth < 20 * len(keys), f"the summary grows by {growth:.0f} bytes per item for {len(keys)} scores"


MIRROR_HELD = """
import json, sys, tracemalloc
from pathlib import Path
import langfuse, opentelemetry.exporter.otlp.proto.http.trace_exporter  # imported before the measure
from scoregate.tracks.project import load_project
from scoregate.sinks.langfuse import experiment_mirror
from scoregate.store.run_store import RunStore
root, run_id, experiment_mirror.CHUNK = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
project, store = load_project(root), RunStore.open(root / "runs", run_id)
held, send_chunk = [], experiment_mirror._run_chunk

def measured_chunk(*args, **kwargs):
    held.append(tracemalloc.get_traced_memory()[0])  # the chunks before this one are recorded, their garbage freed
    return send_chunk(*args, **kwargs)

experiment_mirror._run_chunk = measured_chunk
tracemalloc.start()
report = experiment_mirror.mirror_run_to_langfuse(store, project)
print(json.dumps({"held": held, "confirmed": report.items_confirmed, "problems": report.problems}))
"""
MIRROR_CHUNK, MIRROR_ITEMS = 25, 300
"""Items per runner call in this test (the mirror's is 500), and items mirrored: 12 chunks."""


def test_the_langfuse_mirror_holds_a_digest_per_item_not_its_ids(
    run_store: RunStore, project_dir: Path, fake_langfuse: FakeLangfuse
) -> None:
    """What the mirror holds from one chunk to the next (after each chunk's answers are in and its ids dropped),
    at two sizes. Not the peak: inside a chunk the SDK's export thread holds what it has not sent yet, an amount
    that follows the machine's load, not the run's size, and made the peak's growth flaky on a busy machine."""
    env = {**os.environ, **fake_langfuse.env(), "SCOREGATE_LANGFUSE_RPM": "0"}
    inflate(run_store, MIRROR_ITEMS)
    (run_store.directory / STATE_FILE).unlink(missing_ok=True)

    done = subprocess.run(
        [sys.executable, "-c", MIRROR_HELD, str(project_dir), run_store.run_id, str(MIRROR_CHUNK)],
        capture_output=True, text=True, env=env, timeout=600, check=True,
    )  # in a child process: the Langfuse double serving it here is not measured  # fmt: skip

    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert (measured["confirmed"], measured["problems"]) == (MIRROR_ITEMS, []), done.stderr[-2000:]
    held = measured["held"][1:]  # from the second chunk on: the first set-up (client, dataset) is behind
    assert len(held) == MIRROR_ITEMS // MIRROR_CHUNK - 1
    steps = range(len(held))
    mean_step, mean_held = sum(steps) / len(held), sum(held) / len(held)
    slope = sum((k - mean_step) * (h - mean_held) for k, h in zip(steps, held, strict=True)) / sum(
        (k - mean_step) ** 2 for k in steps
    )
    growth = slope / MIRROR_CHUNK

    # ~80 bytes an item: its digest and its place in the record. Keeping each item's id held ~160; leaving each
    # chunk's cyclic garbage (the SDK's spans) to Python's collector ~900.
    assert growth < 120, f"the Langfuse mirror holds {growth:.0f} more bytes per item it has sent"


def test_the_report_charts_and_leaderboard_keep_a_few_bytes_per_item(run_store: RunStore, project_dir: Path) -> None:
    from scoregate.report.data import ReportOptions, build_report

    other = make_run(project_dir, "counters")  # a second run of the experiment: the report shows the leaderboard
    options = ReportOptions(max_items=50, resamples=200)  # the item table stays 50 rows: only the charts grow
    peaks = []
    for n in (SMALL, LARGE):
        inflate(run_store, n)
        inflate(other, n, variant=1)
        report = build_report([run_store], options)  # warm
        peaks.append(peak_bytes(lambda: build_report([run_store], options)))
    growth = (peaks[1] - peaks[0]) / (LARGE - SMALL)
    charts = len(report["distributions"][0]["values"]) + 2  # each numeric score, the latency and the cost

    assert report["leaderboard"] is not None and len(report["items"]) == 50
    # held: a float and a measured flag per item and chart (9 bytes); passing: the run store's index of each run
    # (~90 bytes an item while it is built) and the leaderboard's sort of both runs' 16-byte digests and floats
    # (~200). Lists of floats and a dict of ids per item took 570.
    assert growth < 9 * charts + 300, f"the report grows by {growth:.0f} bytes per item for {charts} charts"


def test_saving_the_langfuse_mirror_record_holds_no_text_of_its_digests(run_store: RunStore) -> None:
    from scoregate.integrations.langfuse.delivery import trace_id_for
    from scoregate.integrations.langfuse.mirror_state import MirrorState, trace_seed

    peaks, states = [], []
    for n in (SMALL, LARGE):
        state = MirrorState(host="http://127.0.0.1:1", run_id=run_store.run_id)
        for k in range(n):
            key = f"item-{k:06d}"
            state.record(key, ItemMirror(trace_id=trace_id_for(trace_seed(run_store.run_id, key)), observation_id=None,
                                         trace=True, scores=True))  # fmt: skip
        state.save(run_store)  # warm
        peaks.append(peak_bytes(lambda: state.save(run_store)))  # noqa: B023
        states.append(state)
    growth = (peaks[1] - peaks[0]) / (LARGE - SMALL)
    loaded = MirrorState.load(run_store, "http://127.0.0.1:1")

    assert len(loaded.done) == LARGE and loaded.is_done("item-000000") and loaded.is_done(f"item-{LARGE - 1:06d}")
    assert not loaded.is_done(f"item-{LARGE:06d}")
    # the record is written in pieces: the text of 100,000 digests (2.1 MB, and its copies) is never held whole
    assert growth < 8, f"saving the mirror record grows by {growth:.1f} bytes per confirmed item"
