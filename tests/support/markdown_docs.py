"""Read the user docs as a test does: the README and docs/*.md, their code blocks, shell commands and anchors."""

from __future__ import annotations

import importlib.util
import itertools
import re
import shlex
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import markdown
import typer

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SHELL_KINDS = ("bash", "sh", "cron")


def doc_pages() -> list[Path]:
    """Every Markdown page of the docs site."""
    return sorted(DOCS.rglob("*.md"))


def read(page: Path) -> str:
    """A page's text."""
    return page.read_text(encoding="utf-8")


def code_blocks(text: str, *kinds: str) -> list[str]:
    """The bodies of the fenced code blocks of these languages."""
    return [body for kind, body in FENCE.findall(text) if kind in kinds]


def shell_commands(text: str, program: str) -> list[list[str]]:
    """Every `program ...` command line of the text's shell blocks, continuations joined, comments cut."""
    out = []
    for block in code_blocks(text, *SHELL_KINDS):
        for line in block.replace("\\\n", " ").splitlines():
            tokens = shlex.split(line, comments=True)
            starts = [0] + [i + 1 for i, t in enumerate(tokens) if t == "&&"]
            for start in starts:
                words = list(itertools.takewhile(lambda t: t != "&&", tokens[start:]))
                while words and ("=" in words[0] and not words[0].startswith("-")):
                    words = words[1:]  # VAR=value prefixes
                if words and words[0] in (program, f".venv/bin/{program}"):
                    out.append(words[1:])
    return out


def parse_cli(args: list[str]) -> None:
    """Parse `scoregate ARGS` as the CLI would (options, types, required arguments), without running it."""
    from scoregate.cli import app

    command: Any = typer.main.get_command(app)
    ctx = command.make_context("scoregate", list(args))
    while hasattr(command, "commands"):
        rest = [*(getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", [])), *ctx.args]
        if not rest:
            return
        name, command, sub_args = command.resolve_command(ctx, rest)
        ctx = command.make_context(name, sub_args, parent=ctx)


@cache
def cli_reference_tool() -> ModuleType:
    """tools/cli_reference.py, the MkDocs hook that generates the command reference (a script, not a package)."""
    spec = importlib.util.spec_from_file_location("cli_reference", REPO / "tools" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["cli_reference"] = module
    spec.loader.exec_module(module)
    return module


def rendered_source(page: Path) -> str:
    """The page's Markdown as MkDocs renders it: the command reference's marker replaced by the reference."""
    return cli_reference_tool().on_page_markdown(read(page))


@cache
def anchors(page: Path) -> frozenset[str]:
    """The ids a link may name on a page: its headings' ids (as MkDocs's toc makes them) and explicit ids."""
    md = markdown.Markdown(extensions=["toc", "attr_list", "tables", "fenced_code"])
    html = md.convert(rendered_source(page) if page.is_relative_to(DOCS) else read(page))
    return frozenset(re.findall(r'\bid="([^"]+)"', html))


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def local_links(text: str) -> list[str]:
    """The targets of the text's links and images that point inside the repository (not URLs, not mail)."""
    prose = FENCE.sub("", text)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    targets = [a or b for a, b in LINK.findall(prose)]
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]
