"""Text laid out for a terminal of any width, made safe to print: the rule every printed line follows.

The rule:

- a word (a run of characters without a space: a path, a `file:line`, an id, a key, a URL) is never
  broken; a word wider than the line overflows it; a path under the project root is one word even
  when the root has a space in it (`keep_path`);
- text in backticks (a command to type), a number range (`[-0.375, +1.31]`) and words joined with `KEEP` (a
  no-break space: a label and its value, `cost $0.0012`, a count and its noun) are kept together as if they
  were one word;
- each line of a text is laid out on its own; its continuation lines are indented two columns past its
  own indent, or aligned after its bullet (`- `, `* `, `+ `, `• `, `→ `), so a bullet and its first word
  always share a line and what follows reads as part of it;
- the text is data: control characters are neutralized, and no markup or emoji code is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 controls (ESC starts CSI/OSC sequences; 0x9b and 0x9d are CSI and OSC alone), DEL, and the
bidirectional overrides that reorder what is shown; newline and tab are kept."""


def neutralize(text: str) -> str:
    """Return `text` with every terminal control character shown as an escape (`\\x1b`), newline and tab kept."""
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub(lambda m: _shown(m.group()), text)


def _shown(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


KEEP = "\u00a0"
"""Joins words that must stay on one line; printed as a plain space."""

_COMMAND = re.compile(r"`[^`\n]*`")
_BOUND = r"[-+\u2212]?(?:\d|\.\d|inf|\u221e)[^\s\[\],]*"
_INTERVAL = re.compile(rf"\[{_BOUND}, {_BOUND}\]")
"""A number range as the CLI prints one (a CI, `[-0.375, +1.31]`): never split across lines."""
_WORDS = re.compile(r"( *)([^ ]+)")
_OPENER = re.compile(r"( *)((?:[-*+•→] (?=\S))?)")
_WHOLE_PATHS: set[str] = set()


def keep_path(path: str) -> None:
    """Keep `path` (a project root with a space in it) whole in every line printed from now on."""
    if " " in path:
        _WHOLE_PATHS.add(path)


def keep(*words: str) -> str:
    """Return `words` joined so that no line break falls between them."""
    return KEEP.join(word.replace(" ", KEEP) for word in words)


def keep_name(name: str) -> str:
    """Return a run name (`<model> · <prompt>@<version>, …`) breakable only after a separator, never before `·`."""
    return name.replace(" · ", f"{KEEP}· ")


def join_units(units: Iterable[str], sep: str = "  ") -> str:
    """Return kept-together `units` joined by `sep` (lines may break only between them)."""
    return sep.join(keep(unit) for unit in units if unit)


def wrap(text: str, width: int, *, first: str = "", indent: str = "  ") -> list[str]:
    """Return one line of text as lines of at most `width` cells; a word wider than a line overflows, never cut.

    `first` opens the first line, `indent` every continuation line.
    """
    from rich.cells import cell_len

    text = _COMMAND.sub(lambda m: m.group().replace(" ", KEEP), text)
    text = _INTERVAL.sub(lambda m: m.group().replace(" ", KEEP), text)
    lines: list[str] = []
    line, filled = first, False
    for gap, word in _WORDS.findall(text):
        if not filled:
            line, filled = line + word, True
        elif cell_len(line) + len(gap) + cell_len(word) <= width:
            line += gap + word
        else:
            lines.append(line)
            line = indent + word
    lines.append(line if filled else first.rstrip())
    return [line.replace(KEEP, " ") for line in lines]


def layout(text: str, width: int, *, first: str = "", indent: str | None = None) -> list[str]:
    """Return `text` (any number of lines) laid out by the module's rule, control characters neutralized.

    `first` opens the first line; `indent`, when given, replaces the first line's computed continuation indent.
    """
    for path in _WHOLE_PATHS:
        text = text.replace(path, keep(path))
    out: list[str] = []
    for n, raw in enumerate(neutralize(text).expandtabs(8).split("\n")):
        match = _OPENER.match(raw)
        lead, bullet = match.groups() if match else ("", "")
        opener = (first if n == 0 else "") + lead + bullet
        base = " " * (len(opener) - len(opener.lstrip(" ")))
        hang = indent if n == 0 and indent is not None else base + (" " * len(bullet) if bullet else "  ")
        out += wrap(raw[len(lead) + len(bullet) :], width, first=opener, indent=hang)
    return out


def print_wrapped(
    console: Console,
    text: str,
    *,
    first: str = "",
    indent: str | None = None,
    style: str | None = None,
    first_style: str | None = None,
) -> None:
    """Print `text` laid out to the console's width by the module's rule; no markup or emoji code is read.

    `first` opens the first line (styled `first_style`, e.g. `error: `), `style` styles every line.
    """
    from rich.text import Text

    for n, line in enumerate(layout(text, console.width, first=first, indent=indent)):
        shown = Text(line, style=style or "")
        if n == 0 and first and first_style:
            shown.stylize(first_style, 0, len(first))
        console.print(shown, soft_wrap=True)
