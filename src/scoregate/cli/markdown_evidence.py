"""Markdown evidence for a pull request: what `run` and `compare` write with `--markdown FILE`.

A renderer of the CLI layer, like the terminal ones: it reads the outcome the command already holds and the
candidate run through the facade's `StoredRuns.view`, so it adds no use case and no facade name. Made for a CI job
summary and a PR comment: the verdict, the gates, the scores with their CIs, the worst items (ids and scores
only: no model output, which may hold personal data), links to the report, MLflow and Langfuse. Every line
is at most 80 characters, or one link or path alone (a table whose rows would be wider is written as a
list), so the file reads as plain text at 80 columns; the whole stays under GitHub's 65,536-character
comment limit, cut at a line with a note saying so. The first line is a hidden marker naming what the
evidence is about, so a posting script updates its own comment instead of adding one on each push.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.cli.layout import signed
from scoregate.errors import ScoregateError

if TYPE_CHECKING:
    from scoregate.app.comparison import CompareOutcome
    from scoregate.app.runs import RunView
    from scoregate.store.record import RunSummary

WIDTH = 80
MAX_CHARS = 60_000
"""GitHub takes a comment of up to 65,536 characters (a job summary up to 1 MiB); this leaves room for the note."""
WORST = 5
CUT_NOTE = "*… cut to fit GitHub's comment limit: the report has everything.*"


def comment_marker(key: str) -> str:
    """Return the hidden first line that names the evidence (the posting script finds its comment by it)."""
    return f"<!-- scoregate-evidence: {key} -->"


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|").replace("`", "'")


def _num(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _wrap(text: str, first: str = "", indent: str = "") -> list[str]:
    return textwrap.wrap(
        text, WIDTH, initial_indent=first, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    ) or [first.rstrip()]


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Return a Markdown table, or a list of `header: value` entries when a row would pass 80 columns."""
    rows = [[_cell(c) for c in row] for row in rows]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    if all(len(line) <= WIDTH for line in lines):
        return lines
    out = []
    for row in rows:
        pairs = [f"{h}: {c}" for h, c in zip(headers[1:], row[1:], strict=True)]
        out += _wrap(f"**{row[0]}** — " + ", ".join(pairs), first="- ", indent="  ")
    return out


def fit(lines: list[str], limit: int = MAX_CHARS) -> str:
    """Return the lines as one text, cut at a whole line with a note when it would pass `limit` characters."""
    text: list[str] = []
    size = 0
    for line in lines:
        size += len(line) + 1
        if size > limit - len(CUT_NOTE) - 2:
            return "\n".join([*text, "", CUT_NOTE]) + "\n"
        text.append(line)
    return "\n".join(text) + "\n"


def _level(summary: RunSummary) -> str:
    levels = {s.confidence for s in summary.scores.values() if s.confidence}
    return f"{float(next(iter(levels))):.0%} CI" if len(levels) == 1 else "CI"


def _scores(summary: RunSummary) -> list[str]:
    level = _level(summary)
    rows = []
    for name, s in summary.scores.items():
        ci = "—" if s.ci_low is None else f"[{_num(s.ci_low)}, {_num(s.ci_high)}]"
        rows.append([name, _num(s.mean), ci, f"{s.n_measured}/{s.n_total}"])
    return table(["score", "mean", level, "measured"], rows) if rows else ["No score was measured."]


def _gates(summary: RunSummary) -> list[str]:
    if not summary.gates:
        return ["No gate applies to this run."]
    rows = []
    for g in summary.gates:
        rule = f"{g.stat or ''}({g.metric}) {g.op} {_num(g.threshold)}".lstrip("(")
        rows.append([g.name, rule, _num(g.observed), str(g.status).upper()])
    return table(["gate", "rule", "observed", "status"], rows)


def _worst(view: RunView, metric: str | None) -> list[str]:
    try:
        items = view.item_table(worst=WORST, by=metric)
    except ScoregateError as exc:  # the evidence says why instead of failing the command it follows
        return _wrap(f"Worst items not listed: {exc.render()}")
    rows = list(items.rows)
    key = metric if metric in items.keys else (items.keys[0] if items.keys else None)
    if not rows or key is None:
        return [items.empty.capitalize() + "."]
    body = [[row.item_id, _num(row.scores.get(key)), "yes" if row.error else ""] for row in rows]
    return [*_wrap(f"{items.selection}; ids and scores only:"), "", *table(["item", key, "failed"], body)]


def _links(view: RunView, report: Path | None) -> list[str]:
    lines = []
    if report is not None:
        lines += ["- report:", f"  `{report}`"]
    mlflow = view.mlflow_ui() or view.links.get("mlflow_run_id")
    if mlflow:
        lines += ["- MLflow:", f"  {mlflow}"]
    langfuse = view.links.get("langfuse_experiment_url")
    if langfuse:
        lines += ["- Langfuse:", f"  {langfuse}"]
    return lines or ["No report or mirror for this run."]


def run_markdown(view: RunView, *, report: Path | None, key: str) -> str:
    """Return one run's evidence: verdict, gates, scores with CIs, worst items, links."""
    summary = view.summary_record
    if summary is None:
        return fit([comment_marker(key), f"## scoregate run `{view.run_id}`", "", "The run has no summary yet."])
    primary = summary.gates[0].metric if summary.gates else None
    verdict = (summary.verdict or "none").upper()
    lines = [comment_marker(key), f"## scoregate run — **verdict: {verdict}**", ""]
    lines += _wrap(
        f"Experiment {summary.experiment}: run `{view.run_id}`, model {summary.model}, dataset {summary.dataset}."
    )
    lines += ["", "### Gates", "", *_gates(summary), "", "### Scores", "", *_scores(summary)]
    lines += ["", "### Worst items", "", *_worst(view, primary), "", "### Links", "", *_links(view, report)]
    return fit(lines)


def compare_markdown(outcome: CompareOutcome, candidate: RunView, *, report: Path | None) -> str:
    """Return a comparison's evidence: each score's Δ B − A with its CI and verdict, the candidate's worst items."""
    c = outcome.comparison
    key = f"compare {c.b.experiment or c.b.run_id}"
    primary = ", ".join(c.primary) or "none"
    lines = [comment_marker(key), "## scoregate compare", ""]
    lines += _wrap(f"B = `{c.b.run_id}` against A = `{c.a.run_id}`, paired on {c.shared_items} items in both runs.")
    lines += ["", *_wrap(f"Primary: {primary} ({c.primary_source}).")]
    rows = []
    for name, score in c.scores.items():
        s = score.stats
        ci = "—" if s.diff_ci_low is None else f"[{signed(s.diff_ci_low)}, {signed(s.diff_ci_high)}]"
        star = "" if score.primary else " *"
        rows.append([name, _num(s.mean_a), _num(s.mean_b), signed(s.diff), ci, s.verdict + star])
    lines += ["", "### Scores", "", *table(["score", "A", "B", "Δ B−A", "CI of Δ", "verdict"], rows)]
    if any(not score.primary for score in c.scores.values()):
        lines += ["", *_wrap("\\* secondary: exploratory (Holm-adjusted CI).")]
    lines += ["", "### Worst items", "", *_worst(candidate, c.primary[0] if c.primary else None)]
    lines += ["", "### Links", "", *_links(candidate, report)]
    return fit(lines)


def rollout_markdown(views: Sequence[Any]) -> str:
    """Return `rollout status` as evidence: each rollout's versions, share, last poll's figures and decision."""
    lines = [comment_marker("rollout status"), "## scoregate rollout status", ""]
    if not views:
        return fit([*lines, "No rollout."])
    rows = []
    for view in views:
        r, last = view.record, view.last or {}
        difference = "—" if last.get("lower") is None else f"[{_num(last['lower'])}, {_num(last['upper'])}]"
        share = "—" if last.get("share") is None else f"{last['share']:.1%}"
        rows.append([r.prompt, r.state.replace("_", " "), f"v{r.candidate} over v{r.production}", f"{r.share:.0%}",
                     share, str(last.get("units", 0)), difference, str(last.get("decision", "—"))])  # fmt: skip
    headers = ["prompt", "state", "rollout of", "share", "seen", "units", "difference", "decision"]
    lines += table(headers, rows)
    for view in views:
        if view.last is not None:
            lines += ["", *_wrap(f"{view.record.prompt}, poll {view.last['poll']}: {view.last['reason']}")]
        if view.command:
            lines += ["", *_wrap(f"Next: `{view.command}`")]
    return fit(lines)


def shown_path(root: Path, path: Path | None) -> Path | None:
    """Return `path` relative to the project root when it lies inside it (a CI runner's absolute path says nothing)."""
    if path is None:
        return None
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        return path


def write_markdown(path: Path, text: str) -> None:
    """Write the evidence to `path` whole (a reader never sees half a file)."""
    from scoregate.support.files import replace_atomically

    check_markdown_path(path)
    with replace_atomically(path) as out:
        out.write(text)


EVIDENCE_START = comment_marker("")[: -len(" -->")]
"""How every evidence file starts: a file that does not is someone's, and is never replaced."""


def check_markdown_path(path: Path) -> None:
    """Refuse, as a usage error before any work, a `--markdown FILE` where no file can be written, or a file there that
    is not evidence scoregate wrote (a README, a run's results.jsonl): replacing it would lose it."""
    from scoregate.errors import ScoregateError, UsageError
    from scoregate.support.files import check_writable_path

    try:
        check_writable_path(path)
    except ScoregateError as exc:
        raise UsageError(f"{exc.where}: {exc.message}", option="--markdown", hint=exc.hint) from None
    if path.is_file():
        with path.open("rb") as handle:
            start = handle.read(len(EVIDENCE_START))
        if start and start != EVIDENCE_START.encode():
            raise UsageError(
                f"{path}: exists and is not scoregate evidence (it does not start with `{EVIDENCE_START}… -->`), "
                "so --markdown will not replace it",
                option="--markdown",
                hint="name a new file, or remove this one first",
            )
