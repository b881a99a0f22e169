"""Deterministic counters over a summary: word counts, compression, references, tools, caps, sections.

No model call. Each counter returns a measured value or a null score with the reason it could not be
measured (non-text output, missing reference, no TL;DR section, unknown style...). Definitions:

- `word_count`: whitespace-separated tokens of the output.
- `compression_ratio`: word_count(output) / word_count(source text); `source` defaults to `input.transcript`.
- `references_count`: distinct URLs anywhere in the output, plus distinct "References & Tools" entries
  that hold no URL. A URL is `https?://` up to whitespace, with trailing `) . , > ] ; : ! ? * _ ' "` and
  backticks stripped (a `)` or `]` is kept when it closes a bracket opened inside the URL); URLs are
  deduplicated ignoring case and a trailing `/`. Entries are defined as for `tools_count`; an entry
  holding a URL is counted once, through its URL; entries without one are deduplicated by name,
  ignoring case.
- `tools_count`: distinct names among the "References & Tools" entries, ignoring case. Entries are the
  section's top-level list items (`-`, `*`, `+`, `•`, `1.`); a section without list items takes each
  line as an entry, splitting a line on `,`/`;` outside brackets (`Tools: Kafka, Flink`), and skipping
  group labels ending in `:`. A name is the entry with markdown links reduced to their text, URLs,
  emphasis and code marks removed, and cut before a description (`:`, ` - `, ` – `, ` — `, ` (`).
  Entries whose name is empty (a bare URL) are not tools. Null when the section is absent.
- `tldr_within_cap`: 1 when the TL;DR section has at most `cap` words (tokens holding a letter or
  digit, so list markers do not count), else 0; `cap` is a number or a path such as
  `input.max_words_tldr`. Null when there is no TL;DR section or no cap for the item.
- `required_sections`: 1 when every section listed for the item's style is present, else 0;
  `missing_sections`: the missing titles joined by ", " ("" when none). Null when the style at `style`
  (default `input.desired_style`) is missing or not a key of `sections`.
- `similarity`: rapidfuzz normalised Levenshtein similarity (0-1) between the output and the text at
  `source` (default `expected_output`); null when that reference is missing or empty.

A template echo fails the format counters: when a section they check holds the prompt's own instructions (rule in
`scoring.echo`), `required_sections` and `tldr_within_cap` score 0, and the three say so in the score's comment.

Section headings are found by `scoring.sections` (see its docstring for the matching rule).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.scoring.base import VALID_ROOTS, EvalContext, resolve_path
from scoregate.scoring.echo import InstructionEcho, echo_comment
from scoregate.scoring.kinds.counters import CounterName, CounterSpec, CountersSpec
from scoregate.scoring.sections import Section, SectionFinder
from scoregate.store.records import DataType, Score, ScoreValue

TLDR = "TL;DR"
REFERENCES = "References & Tools"

_URL = re.compile(r"https?://\S+")
_URL_TRAILING = ").,>];:!?*_'\"`"
_MD_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?https?://[^)\s]*>?\s*\)")
_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+•]|\d+[.)])\s+(.*\S)\s*$")
_DESCRIPTION = re.compile(r"\s*(?::|\s[-–—]\s|\s\().*$")
_EMPHASIS = re.compile(r"[*`]+|(?<!\w)_+|_+(?!\w)")
_WORDLIKE = re.compile(r"\S*[^\W_]\S*")
_SPACES = re.compile(r"\s+")

DATA_TYPES: dict[CounterName, DataType] = {
    "word_count": "numeric",
    "compression_ratio": "numeric",
    "references_count": "numeric",
    "tools_count": "numeric",
    "tldr_within_cap": "boolean",
    "required_sections": "boolean",
    "missing_sections": "text",
    "similarity": "numeric",
}


class _Unmeasured(Exception):
    """A counter that cannot be measured for this item; the message is the reason."""


class _Item:
    """One output under scoring; sections and word count are computed at most once, on first use."""

    __slots__ = ("_echo", "_finder", "_sections", "_words", "ctx", "text")

    def __init__(self, ctx: EvalContext, text: str, finder: SectionFinder) -> None:
        self.ctx = ctx
        self.text = text
        self._finder = finder
        self._sections: dict[str, Section] | None = None
        self._words: int | None = None
        self._echo = InstructionEcho(ctx.instructions) if ctx.instructions else None

    @property
    def words(self) -> int:
        if self._words is None:
            self._words = len(self.text.split())
        return self._words

    @property
    def sections(self) -> dict[str, Section]:
        if self._sections is None:
            self._sections = self._finder.parse(self.text)
        return self._sections

    def echoed(self, titles: list[str]) -> list[tuple[str, str]]:
        """(title, first copied line) of each found section among `titles` that holds the prompt's instructions."""
        if self._echo is None:
            return []
        found = ((t, self.sections[t].body) for t in titles if t in self.sections)
        return [(title, line) for title, body in found if (line := self._echo.copied_line(body)) is not None]


CounterFn = Callable[[_Item], ScoreValue | tuple[ScoreValue, str]]
"""A counter: its value, or (value, comment) when the value needs a word (a template echo)."""


class CountersEvaluator:
    """Computes the deterministic counters of a `kind: counters` evaluator file."""

    def __init__(self, spec: CountersSpec) -> None:
        self.name = spec.name
        self.version = spec.version
        titles = [TLDR, REFERENCES]
        for c in spec.counters:
            for style_titles in (c.sections or {}).values():
                titles.extend(style_titles)
        try:
            self._finder = SectionFinder(titles)
        except ValueError as exc:
            raise ScoregateError(str(exc), where=f"evaluator {spec.name}") from exc
        self._counters: list[tuple[str, DataType, CounterFn]] = []
        seen: set[str] = set()
        for i, c in enumerate(spec.counters):
            where = f"evaluator {spec.name}: counters[{i}] ({c.counter})"
            if c.score_key in seen:
                raise ScoregateError(
                    f"score key {c.score_key!r} is written twice",
                    where=where,
                    hint="give each counter a distinct `key:`",
                )
            seen.add(c.score_key)
            self._counters.append((c.score_key, DATA_TYPES[c.counter], self._build(c, where)))

    def score_keys(self) -> list[tuple[str, DataType]]:
        """The (key, data type) pairs this evaluator writes, in file order."""
        return [(key, dtype) for key, dtype, _ in self._counters]

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """Return one score per counter (see `score`)."""
        return self.score(ctx)

    def score(self, ctx: EvalContext) -> list[Score]:
        """Return one score per counter; null with a reason where a counter cannot be measured."""
        if not isinstance(ctx.output, str):
            got = "null" if ctx.output is None else type(ctx.output).__name__
            reason = f"output is {got}, not text"
            return [Score.missing(key, dtype, self.name, reason) for key, dtype, _ in self._counters]
        item = _Item(ctx, ctx.output, self._finder)
        scores = []
        for key, dtype, fn in self._counters:
            try:
                out = fn(item)
                value, comment = out if isinstance(out, tuple) else (out, None)
                scores.append(Score(name=key, value=value, data_type=dtype, evaluator=self.name, comment=comment))
            except _Unmeasured as why:
                scores.append(Score.missing(key, dtype, self.name, str(why)))
        return scores

    def _build(self, c: CounterSpec, where: str) -> CounterFn:
        """Check a counter's options and return the function computing it."""
        if c.counter == "word_count":
            return lambda item: item.words
        if c.counter == "compression_ratio":
            return _compression(_checked_path(c.source or "input.transcript", where))
        if c.counter == "similarity":
            return _similarity(_checked_path(c.source or "expected_output", where))
        if c.counter == "references_count":
            return _references_count
        if c.counter == "tools_count":
            return _tools_count
        if c.counter == "tldr_within_cap":
            if c.cap is None:
                raise ScoregateError(
                    "tldr_within_cap needs `cap:`", where=where, hint="set `cap: 60` or `cap: input.max_words_tldr`"
                )
            return _tldr_within_cap(_checked_cap(c.cap, where))
        if not c.sections:
            raise ScoregateError(
                f"{c.counter} needs `sections:` (style → list of titles)",
                where=where,
                hint="e.g. `sections: {howto: [TL;DR, Step-by-step, References & Tools]}`",
            )
        style_path = _checked_path(c.style or "input.desired_style", where)
        required = {style.strip().lower(): [self._canonical(t) for t in titles] for style, titles in c.sections.items()}
        written = {style.strip().lower(): titles for style, titles in c.sections.items()}
        check = _section_check(style_path, required, written)

        def sections(item: _Item) -> ScoreValue | tuple[ScoreValue, str]:
            missing, echoed = check(item)
            value: ScoreValue = (
                int(not missing and not echoed) if c.counter == "required_sections" else ", ".join(missing)
            )
            return (value, echo_comment(echoed)) if echoed else value

        return sections

    def _canonical(self, title: str) -> str:
        """The key the section finder files `title` under."""
        canonical = self._finder.match(title, exact=True)
        assert canonical is not None  # every configured title is one of the finder's titles
        return canonical


def _checked_path(path: str, where: str) -> str:
    """Return `path` when its root is one `resolve_path` knows, else raise a user error."""
    if path.partition(".")[0] not in VALID_ROOTS:
        raise ScoregateError(
            f"unknown source {path!r}",
            where=where,
            hint="use output, expected_output, input.<field> or metadata.<field>",
        )
    return path


def _checked_cap(cap: str | int, where: str) -> int | str:
    """A fixed cap (int) or the path to read it from."""
    if isinstance(cap, int):
        return cap
    text = cap.strip()
    return int(text) if text.isdigit() else _checked_path(text, where)


def _text_at(item: _Item, path: str) -> str:
    """The non-empty text at `path`, or `_Unmeasured` saying why there is none."""
    value = resolve_path(path, item.ctx)
    if value is None:
        raise _Unmeasured(f"no reference text: {path} is missing")
    if not isinstance(value, str):
        raise _Unmeasured(f"no reference text: {path} is {type(value).__name__}, not text")
    if not value.strip():
        raise _Unmeasured(f"no reference text: {path} is empty")
    return value


def _compression(source: str) -> CounterFn:
    def compression_ratio(item: _Item) -> float:
        return item.words / len(_text_at(item, source).split())

    return compression_ratio


def _similarity(source: str) -> CounterFn:
    def similarity(item: _Item) -> float:
        from rapidfuzz.distance import Levenshtein  # at the first score: a run's models are checked before it loads

        return float(Levenshtein.normalized_similarity(item.text, _text_at(item, source)))

    return similarity


def _tldr_within_cap(cap: int | str) -> CounterFn:
    def tldr_within_cap(item: _Item) -> int | tuple[int, str]:
        limit = cap if isinstance(cap, int) else _cap_at(item, cap)
        tldr = item.sections.get(TLDR)
        if tldr is None:
            raise _Unmeasured("the output has no TL;DR section")
        if echoed := item.echoed([TLDR]):
            return 0, echo_comment(echoed)
        return int(len(_WORDLIKE.findall(tldr.body)) <= limit)

    return tldr_within_cap


def _cap_at(item: _Item, path: str) -> int:
    """The item's word cap read from `path`."""
    value: Any = resolve_path(path, item.ctx)
    if value is None:
        raise _Unmeasured(f"no TL;DR word cap: {path} is missing")
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and value == int(value) and value >= 0:
        return int(value)
    raise _Unmeasured(f"no TL;DR word cap: {path} is {value!r}, not a whole number of words")


def _section_check(
    style_path: str, required: dict[str, list[str]], written: dict[str, list[str]]
) -> Callable[[_Item], tuple[list[str], list[tuple[str, str]]]]:
    """Return check(item) → (the missing titles as written, the echoed sections) for the item's style."""

    def check(item: _Item) -> tuple[list[str], list[tuple[str, str]]]:
        style = resolve_path(style_path, item.ctx)
        key = style.strip().lower() if isinstance(style, str) else None
        if key not in required:
            known = ", ".join(sorted(required))
            shown = "missing" if style is None else repr(style)
            raise _Unmeasured(f"style {shown} at {style_path} has no required sections (known: {known})")
        found = item.sections
        pairs = zip(written[key], required[key], strict=True)
        return [title for title, canonical in pairs if canonical not in found], item.echoed(required[key])

    return check


def find_urls(text: str) -> list[str]:
    """Return the URLs in `text`, trailing punctuation stripped, in order (duplicates kept)."""
    urls = []
    for raw in _URL.findall(text):
        url = raw
        while url and url[-1] in _URL_TRAILING:
            closer = url[-1]
            opener = {")": "(", "]": "["}.get(closer)
            if opener and url.count(opener) >= url.count(closer):
                break
            url = url[:-1]
        if len(url) > len("https://"):
            urls.append(url)
    return urls


def reference_entries(body: str) -> list[str]:
    """Return the entries of a "References & Tools" body: top-level list items, else lines split on , ;"""
    lines = [line for line in body.splitlines() if line.strip()]
    items = [(len(m.group(1).expandtabs(4)), m.group(2)) for m in map(_LIST_ITEM.match, lines) if m]
    if items:
        top = min(indent for indent, _ in items)
        return [text for indent, text in items if indent == top]
    entries: list[str] = []
    for line in lines:
        text = line.strip()
        if text.startswith("#") or text.endswith(":"):
            continue
        entries.extend(part for part in _split_outside_brackets(text) if part)
    return entries


def entry_name(entry: str) -> str:
    """Return the name an entry lists: link text kept, URLs/markdown removed, description cut off."""
    text = _MD_LINK.sub(r"\1", entry)
    text = _URL.sub(" ", text).replace("<>", " ")
    text = _EMPHASIS.sub("", text).strip()
    text = _DESCRIPTION.sub("", text)
    return _SPACES.sub(" ", text).strip(" \t-–—,;.()[]<>")


def _split_outside_brackets(text: str) -> list[str]:
    """Split on `,` and `;` that are not inside (), [] or <>."""
    parts: list[str] = []
    depth = start = 0
    for i, ch in enumerate(text):
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth = max(0, depth - 1)
        elif ch in ",;" and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _url_key(url: str) -> str:
    return url.lower().rstrip("/")


def _references_count(item: _Item) -> int:
    urls = {_url_key(u) for u in find_urls(item.text)}
    section = item.sections.get(REFERENCES)
    names = set()
    if section is not None:
        for entry in reference_entries(section.body):
            if not _URL.search(entry) and (name := entry_name(entry)):
                names.add(name.casefold())
    return len(urls) + len(names)


def _tools_count(item: _Item) -> int:
    section = item.sections.get(REFERENCES)
    if section is None:
        raise _Unmeasured(f"the output has no {REFERENCES!r} section")
    return len({name.casefold() for e in reference_entries(section.body) if (name := entry_name(e))})
