"""`--markdown FILE` on `run` and `compare`: the evidence a pull request shows, readable at 80 columns as plain text,
under GitHub's comment limit, with a marker the posting script finds its own comment by."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from scoregate.cli.markdown_evidence import CUT_NOTE, comment_marker, fit, table
from support.compare_runs import write_run
from support.projects import CliResult

GITHUB_COMMENT_LIMIT = 65_536


def _fits_80_columns(text: str) -> list[str]:
    """The lines wider than 80 columns that are not one unbreakable token (a link or a path alone)."""
    return [line for line in text.splitlines() if len(line) > 80 and len(line.strip().split(" ")) > 2]


def test_run_writes_its_verdict_gates_scores_worst_items_and_links_as_markdown(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    plain = scoregate("run", "counters", "--no-mlflow", "--no-langfuse")
    before = {p.name for p in (project_dir / "runs").iterdir()}
    result = scoregate(
        "run", "counters", "--no-mlflow", "--no-langfuse", "--markdown", str(project_dir / "evidence.md")
    )

    assert result.code == plain.code == 0, result.output
    text = (project_dir / "evidence.md").read_text(encoding="utf-8")
    (run_id,) = {p.name for p in (project_dir / "runs").iterdir()} - before
    assert text.startswith("<!-- scoregate-evidence: counters -->\n")
    assert f"`{run_id}`" in text and "**verdict:" in text
    for gate in ("sections_present", "tldr_caps_met"):
        assert gate in text
    assert "| score | mean | 95% CI | measured |" in text or "95% CI" in text
    assert "### Worst items" in text and f"`runs/{run_id}/report.html`" in text
    assert _fits_80_columns(text) == []
    assert "markdown:" in result.out and "evidence.md" in result.out


def test_compare_writes_each_verdict_with_its_ci_and_the_candidate_s_worst_items(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    runs_dir = project_dir / "runs"
    write_run(runs_dir, "run-a", {f"i{k}": {"quality": k % 5 + 1} for k in range(30)})
    write_run(
        runs_dir, "run-b", {f"i{k}": {"quality": min(5, k % 5 + 2)} for k in range(29)} | {"odd|id": {"quality": 1}}
    )

    result = scoregate(
        "compare", "run-a", "run-b", "--no-mlflow", "--markdown", str(project_dir / "cmp.md"), "--metric", "quality"
    )

    assert result.code == 0, result.output
    text = (project_dir / "cmp.md").read_text(encoding="utf-8")
    assert text.startswith("<!-- scoregate-evidence: compare hardcases -->\n")
    assert "B = `run-b` against A = `run-a`" in text
    quality = next(line for line in text.splitlines() if line.startswith("| quality"))
    assert "better" in quality and "[" in quality and "]" in quality, quality
    assert "odd\\|id" in text  # a table cell never breaks on an id's |
    assert _fits_80_columns(text) == []


def test_evidence_too_long_for_a_comment_is_cut_at_a_line_and_says_so() -> None:
    rows = [[f"a_rather_long_score_name_number_{k:05d}_for_the_table", "0.5", "0.75", "+0.25", "[+0.1, +0.4]",
             "better"] for k in range(3000)]  # fmt: skip
    lines = table(["score", "A", "B", "Δ B−A", "CI of Δ", "verdict"], rows)
    text = fit([comment_marker("compare a b"), *lines])

    assert lines[0].startswith("- **a_rather_long_score_name_number_00000_for_the_table** — A: 0.5")  # a list
    assert len(text) < GITHUB_COMMENT_LIMIT and text.endswith(CUT_NOTE + "\n")
    assert text.startswith("<!-- scoregate-evidence: compare a b -->\n")
    assert _fits_80_columns(text) == []
    assert fit(["short", "evidence"]) == "short\nevidence\n"


def test_markdown_describes_one_whole_run_or_one_comparison_and_says_so_otherwise(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    out = str(project_dir / "never.md")
    dry = scoregate("run", "counters", "--dry-run", "--markdown", out)
    ranked = scoregate("compare", "a", "b", "c", "--markdown", out)

    assert dry.code == 2 and "describes one whole run: not with --dry-run, --models or --shard" in dry.output
    assert ranked.code == 2 and "describes a comparison of two runs, not a ranking" in ranked.output
    assert not (project_dir / "never.md").exists()


def test_run_markdown_to_a_folder_or_under_a_file_is_refused_before_the_run_spends_anything(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    blocker = project_dir / "notes.txt"
    blocker.write_text("a file, not a folder\n", encoding="utf-8")
    for target, expected in [
        (project_dir, f"{project_dir}: is a folder; name the file to write"),
        (blocker / "evidence.md", f"{blocker} is a file, not a folder"),
    ]:
        result = scoregate("run", "counters", "--no-mlflow", "--no-langfuse", "--markdown", str(target))
        assert result.code == 2, result.output
        assert expected in result.output, result.output
        assert not (project_dir / "runs").exists() or not any((project_dir / "runs").iterdir()), result.output
    assert blocker.read_text(encoding="utf-8") == "a file, not a folder\n"


def test_compare_markdown_under_a_file_names_the_file_in_one_line(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    runs_dir = project_dir / "runs"
    write_run(runs_dir, "run-a", {f"i{k}": {"quality": k % 5 + 1} for k in range(6)})
    write_run(runs_dir, "run-b", {f"i{k}": {"quality": k % 5 + 2} for k in range(6)})
    blocker = project_dir / "notes.txt"
    blocker.write_text("a file\n", encoding="utf-8")

    result = scoregate("compare", "run-a", "run-b", "--no-mlflow", "--markdown", str(blocker / "cmp.md"))

    assert result.code == 2, result.output
    assert f"{blocker / 'cmp.md'}: cannot write: {blocker} is a file, not a folder" in result.output, result.output


def test_markdown_never_replaces_a_file_that_is_not_scoregate_evidence(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    runs_dir = project_dir / "runs"
    write_run(runs_dir, "run-a", {f"i{k}": {"quality": k % 5 + 1} for k in range(6)})
    write_run(runs_dir, "run-b", {f"i{k}": {"quality": k % 5 + 2} for k in range(6)})
    readme = project_dir / "README.md"
    readme.write_text("# Our project\n\nhand-written notes\n", encoding="utf-8")
    results = runs_dir / "run-b" / "results.jsonl"
    kept = {path: path.read_bytes() for path in (readme, results)}

    for target in (readme, results):
        result = scoregate("compare", "run-a", "run-b", "--no-mlflow", "--markdown", str(target))
        assert result.code == 2, result.output
        assert f"{target}: exists and is not scoregate evidence" in result.output, result.output
    run = scoregate("run", "counters", "--no-mlflow", "--no-langfuse", "--markdown", str(readme))
    assert run.code == 2 and "is not scoregate evidence" in run.output, run.output
    assert {path: path.read_bytes() for path in kept} == kept

    evidence = project_dir / "evidence.md"
    for _ in range(2):  # evidence written before is replaced, as a PR comment is updated
        assert scoregate("compare", "run-a", "run-b", "--no-mlflow", "--markdown", str(evidence)).code == 0
    assert evidence.read_text(encoding="utf-8").startswith("<!-- scoregate-evidence: compare")
