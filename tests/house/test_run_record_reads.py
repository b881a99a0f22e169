"""The run record is read through its types: no code indexes a manifest or summary by field name.

`store/record.py` types `manifest.json` and `summary.json`; a reader asks `store.manifest_record.receipts.dataset`
or `summary.scores[key].mean`, so a renamed or retyped field fails mypy at every reader instead of a `KeyError`
at a user's. This test reads every module's syntax tree: a string key that names a field of `Manifest`,
`Receipts` or `RunSummary`, taken (`x["key"]`, `x.get("key")`) from an expression named `manifest`, `summary`
or `receipts` (`manifest`, `store.manifest`, `ctx.summary`...), is a read by string key. Writing a new record
(`summary["flaky"] = ...`) is not a read.
"""

from __future__ import annotations

import ast
from pathlib import Path

from scoregate.store.record import Manifest, Receipts, RunSummary

SRC = Path(__file__).resolve().parents[2] / "src" / "scoregate"
RECORD_NAMES = {"manifest", "summary", "receipts"}
FIELDS = {*Manifest.model_fields, *Receipts.model_fields, *RunSummary.model_fields}
FILE_LAYER = {"store/record", "store/record_files", "store/run_store"}
"""The modules that read the JSON files and make the typed record of them."""
BUILDERS: dict[str, str] = {
    "app/run/summary:summarize_run": "assembles summary.json from the aggregates, the tracks' blocks, the gates",
    "analysis/gates:evaluate_gate": "judges a gate on the summary being assembled (no run id yet, so no RunSummary)",
    "tracks/extraction/decision:summary_recommendation": "the track's block is made from the summary being assembled",
}
"""`module:function` → why it may index a summary by key: it works on the dict that becomes summary.json."""


def _holder(node: ast.expr) -> str | None:
    """The name a record expression ends with (`store.manifest` → `manifest`), or None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "receipts":
        return "receipts"
    return None


def _key_reads(tree: ast.AST) -> list[tuple[int, str, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            target, key = node.value, node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            target, key = node.func.value, node.args[0]
        else:
            continue
        holder = _holder(target)
        if holder in RECORD_NAMES and isinstance(key, ast.Constant) and key.value in FIELDS:
            found.append((node.lineno, holder, str(key.value)))
    return found


def _function_at(tree: ast.AST, line: int) -> str:
    best = ""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno <= line <= (node.end_lineno or 0):
            best = node.name
    return best


def test_no_module_reads_the_run_record_by_string_key() -> None:
    reads = []
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).with_suffix("").as_posix()
        if module in FILE_LAYER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, holder, key in _key_reads(tree):
            if f"{module}:{_function_at(tree, line)}" not in BUILDERS:
                reads.append(f"src/scoregate/{module}.py:{line}: {holder}[{key!r}]")

    assert reads == [], "read these through the typed record (store/record.py):\n" + "\n".join(reads)


def test_the_check_finds_a_read_by_string_key() -> None:
    tree = ast.parse(
        "def f(store, summary):\n    a = store.manifest['receipts']['dataset']\n    summary['flaky'] = 1\n"
        "    return summary.get('scores'), summary['extraction']\n"
    )

    assert sorted(_key_reads(tree)) == [
        (2, "manifest", "receipts"),
        (2, "receipts", "dataset"),
        (4, "summary", "scores"),
    ]
