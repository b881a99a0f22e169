"""The docs site tells the truth: its commands parse, its links resolve, its command reference is the CLI's."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import markdown
import pytest
import typer
import yaml

from scoregate.catalog.config_models import ProjectConfig
from support.markdown_docs import (
    DOCS,
    FENCE,
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


def _broken_links(page: Path, root: Path, text: str | None = None) -> list[str]:
    """The links of `page` (or of `text`, read as if it were on that page) whose file or anchor does not exist."""
    broken = []
    for target in local_links(read(page) if text is None else text):
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


def test_every_pointer_from_the_code_into_the_manual_resolves() -> None:
    """A hint such as `see docs/tracks/tags.md` names a page that exists; `see README, X` a README section."""
    headings = [h.lower() for h in re.findall(r"^#+ (.+)$", read(README), re.MULTILINE)]
    broken = []
    for module in sorted((REPO / "src" / "scoregate").rglob("*.py")):
        text = module.read_text(encoding="utf-8")
        where = module.relative_to(REPO)
        broken += [
            f"{where}: {page}" for page in re.findall(r"\bdocs/[\w/.-]+\.md", text) if not (REPO / page).is_file()
        ]
        for section in re.findall(r"see README[,:] ([^)\"]+)", text):
            if not any(section.lower() in heading for heading in headings):
                broken.append(f"{where}: README section {section!r}")
    assert broken == []


def test_the_link_check_sees_a_broken_file_a_broken_anchor_and_a_link_out_of_the_site() -> None:
    text = (
        "[a](reference/cli.md#scoregate-no-such-command) [b](no-such-page.md) [c](#nowhere) [d](../README.md)\n"
        "[fine](reference/cli.md#scoregate-runs-show) [fine too](files/datasets.md#datasetsnameyaml)\n"
    )
    broken = _broken_links(DOCS / "index.md", DOCS, text)
    assert [line.split(":")[0] for line in broken] == [
        "reference/cli.md#scoregate-no-such-command",
        "no-such-page.md",
        "#nowhere",
        "../README.md",
    ]


def test_every_page_is_in_the_navigation() -> None:
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    listed = set(re.findall(r"[\w/.-]+\.md", json.dumps(nav)))
    assert {str(page.relative_to(DOCS)) for page in PAGES} == listed


# ---------------------------------------------------------------- examples that are the shipped files


def _is_subset(excerpt: Any, shipped: Any, where: str) -> list[str]:
    """Return where the excerpt says something the shipped file does not."""
    if isinstance(excerpt, dict):
        if not isinstance(shipped, dict):
            return [where]
        problems = []
        for key, value in excerpt.items():
            if key not in shipped:
                problems.append(f"{where}.{key} (not in the shipped file)")
            else:
                problems += _is_subset(value, shipped[key], f"{where}.{key}")
        return problems
    if isinstance(excerpt, list) and excerpt and all(isinstance(x, dict) and "name" in x for x in excerpt):
        by_name = {x["name"]: x for x in shipped}
        return [p for x in excerpt for p in _is_subset(x, by_name.get(x["name"]), f"{where}[{x['name']}]")]
    return [] if excerpt == shipped else [f"{where}: docs {excerpt!r} != shipped {shipped!r}"]


def test_the_docs_scoregate_yaml_is_an_excerpt_of_the_shipped_file() -> None:
    page = (DOCS / "files" / "scoregate-yaml.md").read_text(encoding="utf-8")
    excerpt = yaml.safe_load(FENCE.search(page).group(2))  # type: ignore[union-attr]
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))

    assert _is_subset(excerpt, shipped, "scoregate.yaml") == []
    ProjectConfig.model_validate(excerpt)  # and it is a valid config on its own


def test_a_keyless_docs_example_runs(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`scoregate extraction check extraction_v1`, as the extraction page shows it: a dataset name, from the root."""
    from scoregate.cli import main

    page = (DOCS / "tracks" / "extraction.md").read_text(encoding="utf-8")
    assert ["extraction", "check", "extraction_v1"] in shell_commands(page, "scoregate")
    monkeypatch.chdir(REPO)
    monkeypatch.setattr("sys.argv", ["scoregate", "extraction", "check", "extraction_v1"])
    main()
    assert "56 of 56 items can be scored" in " ".join(capsys.readouterr().out.split())


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


def test_every_command_is_shown_on_a_page_besides_the_reference() -> None:
    """A new command needs a page that says what it is for, not only its generated options."""
    tool = cli_reference_tool()
    prose = "\n".join(read(page) for page in PAGES if page != DOCS / "reference" / "cli.md")
    leaves = [doc.title for doc in tool.walk(tool.root_command()) if doc.path and not hasattr(doc.command, "commands")]
    assert len(leaves) >= 35
    assert [title for title in leaves if title not in prose] == []


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
    html = markdown.markdown(escape("runs/<id>/ with dashboards/*.yaml and LANGFUSE_SECRET_KEY or `a_*b`"))
    assert html == "<p>runs/&lt;id&gt;/ with dashboards/*.yaml and LANGFUSE_SECRET_KEY or <code>a_*b</code></p>"


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


def _make_docs_command() -> list[str]:
    """The command `make docs` runs, with this environment's executables for `$(BIN)`."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^docs:.*\n\t(.+)$", makefile, re.MULTILINE)
    assert recipe is not None, "no `docs` target in the Makefile"
    return shlex.split(recipe.group(1).replace("$(BIN)/", f"{Path(sys.executable).parent}/"))


def _site_copy(root: Path) -> Path:
    """A copy of what the site is built from: mkdocs.yml, docs/, its hook and the files it includes."""
    for part in ("mkdocs.yml", "tools/cli_reference.py", "bench/README.md"):
        (root / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / part, root / part)
    shutil.copytree(DOCS, root / "docs")
    plugin = "tests/support/plugin_dist"  # the plug-in package docs/extending/plugins.md shows
    shutil.copytree(REPO / plugin, root / plugin, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    return root


def test_make_docs_builds_the_site_and_fails_on_a_broken_anchor(tmp_path: Path) -> None:
    site = _site_copy(tmp_path / "site-src")
    built = subprocess.run(_make_docs_command(), cwd=site, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    assert "scoregate runs show" in (site / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")

    with (site / "docs" / "index.md").open("a", encoding="utf-8") as page:
        page.write("\nSee [the dataset's yaml](files/datasets.md#no-such-heading).\n")
    broken = subprocess.run(_make_docs_command(), cwd=site, capture_output=True, text=True, timeout=300)
    assert broken.returncode != 0
    assert "#no-such-heading" in broken.stderr


def test_ci_builds_the_docs_before_the_tests() -> None:
    steps = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert steps.index("make docs") < steps.index("make test")


def test_the_readme_is_a_front_page_under_250_lines() -> None:
    lines = read(README).splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines; move reference material to docs/"


def test_the_shell_blocks_of_the_docs_and_the_readme_are_marked_as_shell() -> None:
    """A command in an unmarked block would escape the checks above."""
    unmarked = [
        f"{page.relative_to(REPO)}: {line.strip()}"
        for page in [*PAGES, README]
        for body in code_blocks(read(page), "")
        for line in body.splitlines()
        if line.strip().startswith(("scoregate ", ".venv/bin/scoregate ", "make "))
    ]
    assert unmarked == []


def test_the_commands_page_lists_every_command_the_cli_has() -> None:
    """docs/running/index.md is the list of commands: one the CLI has (`items flaky` once) cannot go missing from it."""
    tool = cli_reference_tool()
    page = read(DOCS / "running" / "index.md")
    table = "\n".join(line for line in page.splitlines() if line.startswith("| `scoregate "))
    leaves = [doc.path for doc in tool.walk(tool.root_command()) if doc.path and not hasattr(doc.command, "commands")]
    assert len(leaves) >= 35

    missing = [" ".join(p) for p in leaves if not re.search(rf"`scoregate {re.escape(' '.join(p))}(?=[ `\[])", table)]

    assert missing == [], f"commands missing from the table of {DOCS / 'running' / 'index.md'}"


def test_make_docs_prints_no_theme_end_of_life_banner(tmp_path: Path) -> None:
    """mkdocs-material 9.7+ prints a 9-line notice on every build unless NO_MKDOCS_2_WARNING is set; `make docs`
    sets it, and the build stays --strict (the notice's facts are kept as a comment in the Makefile)."""
    site = _site_copy(tmp_path / "site-src")
    venv = Path(sys.executable).parent.parent
    built = subprocess.run(
        ["make", "-s", "-f", str(REPO / "Makefile"), f"VENV={venv}", "-o", f"{venv}/.installed", "docs"],
        cwd=site, capture_output=True, text=True, timeout=300,
    )  # fmt: skip

    assert built.returncode == 0, built.stderr
    assert "--strict" in _make_docs_command()
    assert "end of life" not in built.stdout + built.stderr and "Zensical" not in built.stdout + built.stderr
    assert (site / "site" / "index.html").is_file()
