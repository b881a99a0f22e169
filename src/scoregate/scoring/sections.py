"""Find the named sections of a markdown-ish summary ("TL;DR", "References & Tools"...) and their bodies.

The rule, in full:

- A **heading line** is one of
  1. a markdown heading `#` to `####` (`## TL;DR`);
  2. a bold label at the start of a line, `**Title**` or `__Title__`, optionally followed by `:` and
     text on the same line (`**TL;DR:** the gist...`);
  3. a plain label `Title:` at the start of a line, optionally followed by text (`TL;DR: the gist...`);
  4. a line holding nothing but a title (`References & Tools`).
  A list item (`- `, `* `, `1. `) opens no section unless it is a markdown heading.
- A heading line **names a section** when its text matches one of the known titles. Both sides are
  lower-cased, leading numbering (`1.`, `2)`) is dropped, `&` / `and` are ignored, and the text is split
  into words of letters and digits (so `TL;DR`, `TL DR` and `tldr` are one word list or the same letters).
  They match when the letters are equal ignoring spacing (`TLDR` ~ `TL;DR`), or when one word list
  starts the other (`Step-by-step` ~ `Step by step instructions`, `Pitfalls` ~ `Pitfalls/Notes` ~
  `Pitfalls & Notes`, `TL;DR (60 words)` ~ `TL;DR`). Forms 3 and 4 need this match; form 4 needs an
  exact match (no prefix), since bare lines are common in prose.
- A section's **body** runs from its heading line (plus any text after the label on that line) to the
  next line that names a known section, or to the next markdown heading of the same or a higher level
  (for sections opened by a label, any markdown heading ends them). Deeper sub-headings stay inside.
- When a title occurs twice, the first occurrence counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_MD_HEADING = re.compile(r"^ {0,3}(#{1,4})[ \t]+(.*?)[ \t#]*$")
_BOLD_LABEL = re.compile(r"^\s*(?:\*\*|__)(.+?)(?:\*\*|__)\s*(:?)\s*(.*)$")
_PLAIN_LABEL = re.compile(r"^\s*([^:\n*_#`\[\]()]{1,60}?)\s*:\s*(.*)$")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s")
_NUMBERING = re.compile(r"^\s*(?:\d+[.)]|[ivx]+[.)])\s+", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+")
_IGNORED_WORDS = frozenset({"and"})
_LABEL_LEVEL = 9  # deeper than any markdown heading: any markdown heading ends a label-opened section


def title_words(text: str) -> tuple[str, ...]:
    """Return the comparable words of a heading or title (lower-case, no numbering, no `and`/`&`)."""
    text = _NUMBERING.sub("", text.strip().lower())
    return tuple(w for w in _WORD.findall(text) if w not in _IGNORED_WORDS)


@dataclass(frozen=True, slots=True)
class Section:
    """One found section: its canonical title, the heading as written, and its body text."""

    title: str
    heading: str
    body: str


class SectionFinder:
    """Matches headings against a fixed set of known titles; build once per evaluator, reuse per item."""

    def __init__(self, titles: Sequence[str]) -> None:
        self._titles: list[tuple[str, tuple[str, ...], str]] = []
        for title in dict.fromkeys(titles):
            words = title_words(title)
            if not words:
                raise ValueError(f"section title {title!r} has no letters or digits")
            self._titles.append((title, words, "".join(words)))

    @property
    def titles(self) -> list[str]:
        """The known titles, in the order given."""
        return [t for t, _, _ in self._titles]

    def match(self, heading: str, *, exact: bool = False) -> str | None:
        """Return the known title `heading` names (exact word match first, then prefix), or None."""
        words = title_words(heading)
        if not words:
            return None
        joined = "".join(words)
        for title, t_words, t_joined in self._titles:
            if words == t_words or joined == t_joined:
                return title
        if exact:
            return None
        for title, t_words, _ in self._titles:
            shorter, longer = (words, t_words) if len(words) <= len(t_words) else (t_words, words)
            if longer[: len(shorter)] == shorter:
                return title
        return None

    def parse(self, text: str) -> dict[str, Section]:
        """Return the known sections found in `text`, keyed by canonical title (first occurrence wins)."""
        found: dict[str, Section] = {}
        current: tuple[str, str, int] | None = None  # (title, heading, level)
        body: list[str] = []

        def close() -> None:
            if current is not None and current[0] not in found:
                found[current[0]] = Section(current[0], current[1], "\n".join(body).strip())

        for line in text.splitlines():
            opened = self._opens(line)
            if opened is None:
                md = _MD_HEADING.match(line)
                if md and current is not None and len(md.group(1)) <= current[2]:
                    close()
                    current = None
                elif current is not None:
                    body.append(line)
                continue
            close()
            title, heading, level, rest = opened
            current = (title, heading, level)
            body = [rest] if rest else []
        close()
        return found

    def _opens(self, line: str) -> tuple[str, str, int, str] | None:
        """(title, heading, level, text after the label) when `line` opens a known section."""
        stripped = line.strip()
        if not stripped:
            return None
        md = _MD_HEADING.match(line)
        if md:
            heading = _strip_emphasis(md.group(2))
            title = self.match(heading)
            return (title, heading, len(md.group(1)), "") if title else None
        bold = _BOLD_LABEL.match(line)
        if bold and (bold.group(2) or bold.group(1).rstrip().endswith(":") or not bold.group(3)):
            heading = bold.group(1).strip().rstrip(":").strip()
            title = self.match(heading)
            if title:
                return title, heading, _LABEL_LEVEL, bold.group(3).strip()
        if _BULLET.match(line):
            return None
        plain = _PLAIN_LABEL.match(line)
        if plain:
            title = self.match(plain.group(1))
            if title:
                return title, plain.group(1).strip(), _LABEL_LEVEL, plain.group(2).strip()
        if len(stripped) <= 60:
            title = self.match(stripped, exact=True)
            if title:
                return title, stripped, _LABEL_LEVEL, ""
        return None


def _strip_emphasis(text: str) -> str:
    """Drop markdown emphasis markers around a heading's text."""
    return text.strip().strip("*_").strip()
