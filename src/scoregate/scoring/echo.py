"""Tell a section that holds the prompt's own instructions (a template echo) from one the model wrote.

The rule: a line is *copied* when, lower-cased with list markers, emphasis and extra spaces removed, it equals
one of the prompt's instruction lines (`catalog.templates.instruction_lines`: the template with short values
filled in, the item's data such as a transcript left out), or holds at least 5 words and appears inside one (a
sentence lifted from a longer line). A section is *echoed* when at least half of its body's non-blank lines
are copied. Headings are not part of a body, so repeating the prompt's headings is never an echo.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ECHO_SHARE = 0.5
"""A section is echoed when at least this share of its body's lines is copied from the prompt."""
MIN_SENTENCE_WORDS = 5
"""A line shorter than this is copied only when it equals a whole instruction line (`- none mentioned` is not)."""

_LEAD = re.compile(r"^\s*(?:#{1,6}\s+|[-*+•]\s+|\d+[.)]\s+)*")
_MARKS = re.compile(r"[*_`]+")
_SPACES = re.compile(r"\s+")


def _normal(line: str) -> str:
    return _SPACES.sub(" ", _MARKS.sub("", _LEAD.sub("", line))).strip().lower()


class InstructionEcho:
    """The prompt's instruction lines for one item, to test section bodies against."""

    def __init__(self, instructions: Sequence[str]) -> None:
        self._known = [n for n in dict.fromkeys(map(_normal, instructions)) if n]
        self._exact = set(self._known)

    def _copied(self, line: str) -> bool:
        n = _normal(line)
        return n in self._exact or (len(n.split()) >= MIN_SENTENCE_WORDS and any(n in k for k in self._known))

    def copied_line(self, body: str) -> str | None:
        """Return the first copied line of `body` when the body is echoed (see the module docstring), else None."""
        lines = [line.strip() for line in body.splitlines() if _normal(line)]
        copied = [line for line in lines if self._copied(line)]
        return copied[0] if copied and len(copied) >= ECHO_SHARE * len(lines) else None


def echo_comment(echoed: Sequence[tuple[str, str]]) -> str:
    """The comment of a format score failed by echoed sections: which ones, and the first copied line."""
    titles = ", ".join(title for title, _ in echoed)
    first = echoed[0][1]
    shown = first if len(first) <= 80 else first[:80] + "…"
    noun = "section holds" if len(echoed) == 1 else "sections hold"
    return f"template echo: the {titles} {noun} the prompt's own instructions (first: {shown!r}), not a summary"
