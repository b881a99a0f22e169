"""What to do about a damaged summary.json: it holds nothing the run's other files do not, so it is made again."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scoregate.errors import ScoregateError
from scoregate.store.run_files import MANIFEST, DamagedRun, read_run_json


@contextmanager
def made_again(directory: Path) -> Iterator[None]:
    """Reading the summary.json of the run in `directory`: a damaged file's error says how to make it again."""
    try:
        yield
    except DamagedRun as exc:
        exc.hint = summary_hint(directory)
        raise


def summary_hint(directory: Path) -> str:
    """How to make the summary.json of the run in `directory` again: from its results, or from its shards."""
    try:
        merged = "merge" in read_run_json(directory / MANIFEST)
    except ScoregateError:
        merged = False
    if merged:
        return f"summary.json is made from the shards: delete it and run `scoregate merge {directory.name}` again"
    return (
        f"summary.json is made from results.jsonl: delete it and run `scoregate run --resume {directory.name}` "
        "to make it again (no item runs twice)"
    )
