"""The docs site tells the truth: its commands parse, its links resolve, its command reference is the CLI's."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from markdown_docs import (
    DOCS,
    REPO,
    anchors,
    cli_reference_tool,
    code_blocks,
    doc_pages,
    local_links,
    parse_cli,
    read,
    shell_commands,
)

PAGES = doc_pages()
README = REPO / "README.md"
COMMANDS = [(page, args) for page in PAGES for args in shell_commands(read(page), "scoregate")]


def _ids(items: list[tuple[Path, list[str]]]) -> list[str]:
    return [f"{page.relative_to(DOCS)}: {' '.join(args)}"[:80] for page, args in items]


def test_the_docs_show_scoregate_commands() -> None:
    assert len(COMMANDS) >= 40


@pytest.mark.parametrize(("page", "args"), COMMANDS, ids=_ids(COMMANDS))
def test_each_docs_command_parses(page: Path, args: list[str]) -> None:
    import typer

    try:
        parse_cli(args)
    except typer.Exit as exc:  # --version and the like finish while parsing
        assert exc.exit_code == 0


@pytest.mark.parametrize(("page", "args"), COMMANDS, ids=_ids(COMMANDS))
def test_docs_commands_use_no_path_outside_the_repository(page: Path, args: list[str]) -> None:
    outside = [a for a in args if a.startswith(("../", "/")) or "/../" in a]
    assert outside == []


def test_every_make_target_the_docs_show_exists() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([A-Za-z0-9_.-]+):", makefile, re.MULTILINE))
    shown = {words[0] for page in PAGES for words in shell_commands(read(page), "make") if words}
    assert shown and shown <= targets, shown - targets


def _broken_links(page: Path, root: Path) -> list[str]:
    """The links of `page` whose file (under `root`) or anchor does not exist."""
    broken = []
    for target in local_links(read(page)):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.is_relative_to(root) or not file.is_file():
            broken.append(f"{target}: no such file in {'docs/' if root == DOCS else 'the repository'}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading or id #{anchor} in {file.relative_to(REPO)}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_every_link_of_a_docs_page_resolves_inside_the_site(page: Path) -> None:
    assert _broken_links(page, DOCS) == []


def test_every_link_of_the_readme_resolves() -> None:
    assert local_links(read(README)), "the README links into the docs"
    assert _broken_links(README, REPO) == []


def test_the_link_check_sees_a_broken_file_and_a_broken_anchor(tmp_path: Path) -> None:
    page = DOCS / "_probe_broken_links.md"
    page.write_text("[a](reference/cli.md#scoregate-no-such-command) [b](no-such-page.md) [c](#nowhere)\n")
    try:
        assert len(_broken_links(page, DOCS)) == 3
    finally:
        page.unlink()


def test_every_page_is_in_the_navigation() -> None:
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r"[\w/.-]+\.md", nav))
    assert {str(page.relative_to(DOCS)) for page in PAGES} == listed


# ---------------------------------------------------------------- the generated command reference


def _help(*words: str) -> str:
    """`scoregate WORDS --help` as the user reads it."""
    from typer.testing import CliRunner

    from scoregate.cli import app

    result = CliRunner().invoke(app, [*words, "--help"], prog_name="scoregate")
    assert result.exit_code == 0, result.output
    return result.output


def _entries(help_text: str, heading: str) -> list[str]:
    """The names of a `--help` section's entries (`Commands:`, `Options:`, `Arguments:`)."""
    section = re.search(rf"^{heading}:\n(.*?)(?:\n\S|\Z)", help_text, re.MULTILINE | re.DOTALL)
    if section is None:
        return []
    return [re.split(r"\s{2,}", line.strip())[0] for line in section.group(1).splitlines() if re.match(r"  \S", line)]


def _command_paths() -> list[tuple[str, ...]]:
    """Every command `scoregate --help` lists, and every command their own `--help` lists."""
    paths: list[tuple[str, ...]] = [()]
    for name in _entries(_help(), "Commands"):
        paths += [(name,), *((name, sub) for sub in _entries(_help(name), "Commands"))]
    return paths


@pytest.fixture(scope="module")
def reference() -> str:
    return cli_reference_tool().reference()


def _section(reference: str, words: tuple[str, ...]) -> str:
    anchor = "-".join(("scoregate", *words))
    match = re.search(rf"^#+ .*\{{ #{re.escape(anchor)} \}}\n(.*?)(?=^#+ |\Z)", reference, re.MULTILINE | re.DOTALL)
    assert match is not None, f"no section for `scoregate {' '.join(words)}` in the reference"
    return match.group(1)


def test_the_reference_has_every_command_and_option_that_help_lists(reference: str) -> None:
    paths = _command_paths()
    for words in paths:
        help_text = _help(*words)
        section = _section(reference, words)
        for entry in _entries(help_text, "Options") + _entries(help_text, "Arguments"):
            if entry != "--help":
                assert f"`{entry}`" in section, f"`scoregate {' '.join(words)}`: {entry} not in the reference"
    assert len(paths) >= 45
    assert len(re.findall(r"^#+ scoregate", reference, re.MULTILINE)) == len(paths)


def test_the_reference_lists_every_command_even_after_some_were_built() -> None:
    """The lazy group builds a command on first use; the reference must not list only the built ones."""
    tool = cli_reference_tool()
    root = tool.root_command()
    root.get_command(root.context_class(root, info_name="scoregate"), "run")  # `run` built, the others not
    documented = {doc.path for doc in tool.walk(root)}
    fresh = {doc.path for doc in tool.walk(tool.root_command())}
    assert documented == fresh
    assert {("run",), ("runs", "show"), ("langfuse", "check"), ("model", "status")} <= documented


def test_the_reference_page_gets_the_reference_and_other_pages_stay_as_written() -> None:
    tool = cli_reference_tool()
    page = read(DOCS / "reference" / "cli.md")
    assert tool.MARKER in page
    rendered = tool.on_page_markdown(page)
    assert tool.MARKER not in rendered
    assert "\n### scoregate runs show { #scoregate-runs-show }\n" in rendered  # a subcommand is one level down
    assert "\n## scoregate runs { #scoregate-runs }\n" in rendered
    other = read(DOCS / "architecture.md")
    assert tool.on_page_markdown(other) == other


def test_help_text_shows_as_written_in_the_reference() -> None:
    """`<run>`, `*.yaml` and `a_b` are text, not HTML or emphasis; code spans stay code."""
    escape = cli_reference_tool().escape
    import markdown

    html = markdown.markdown(escape("runs/<id>/ with dashboards/*.yaml and LANGFUSE_SECRET_KEY or `a_*b`"))
    assert html == (
        "<p>runs/&lt;id&gt;/ with dashboards/*.yaml and LANGFUSE_SECRET_KEY or <code>a_*b</code></p>"
    )


# ---------------------------------------------------------------- build and size


def test_make_docs_on_a_fresh_clone_creates_the_virtual_environment_first(tmp_path: Path) -> None:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    planned = subprocess.run(
        ["make", "--dry-run", "docs"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
    ).stdout.splitlines()
    venv = next(i for i, line in enumerate(planned) if "-m venv .venv" in line)
    build = next(i for i, line in enumerate(planned) if "mkdocs build --strict" in line)
    assert venv < build
    assert not any("build_llama_wheel" in line for line in planned), "the docs need no local model"


def test_ci_builds_the_docs_before_the_tests() -> None:
    steps = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert steps.index("make docs") < steps.index("make test")


def test_the_readme_is_a_front_page_under_250_lines() -> None:
    lines = read(README).splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines; move reference material to docs/"


def test_the_shell_blocks_of_the_docs_are_marked_as_shell() -> None:
    """A command in an unmarked block would escape the checks above."""
    unmarked = [
        f"{page.relative_to(DOCS)}: {line.strip()}"
        for page in PAGES
        for body in code_blocks(read(page), "")
        for line in body.splitlines()
        if line.strip().startswith(("scoregate ", ".venv/bin/scoregate ", "make "))
    ]
    assert unmarked == []
