"""No printed line ends in spaces when the output is not a terminal: a log, a pipe, a file read by CI.

Rich pads a table's title and its last cell to the table's width; on a terminal that is invisible, in a log
it leaves trailing spaces that a diff of two logs, or `grep ' $'`, shows.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderableType, RenderHook
from rich.segment import Segment


class _LineEndsTrimmed:
    """A renderable as it renders, less the whitespace at the end of each finished line."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        for line, ends in Segment.split_lines_terminator(console.render(self.renderable, options)):
            yield from _trimmed(line) if ends else line  # an unfinished line may go on in the next print
            if ends:
                yield Segment.line()


def _trimmed(line: list[Segment]) -> list[Segment]:
    """`line` without its trailing whitespace; styles and control codes kept."""
    kept = list(line)
    while kept:
        last = kept[-1]
        if last.control:
            break
        text = last.text.rstrip()
        if text:
            kept[-1] = Segment(text, last.style)
            break
        kept.pop()
    return kept + [s for s in line[len(kept) :] if s.control]


class _TrimLineEnds(RenderHook):
    def __init__(self, console: Console) -> None:
        self.console = console

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        if self.console.is_terminal:
            return renderables
        return [_LineEndsTrimmed(r) for r in renderables]


def trim_line_ends(console: Console) -> Console:
    """Return `console`, set to print no trailing whitespace on a line when it does not write to a terminal."""
    console.push_render_hook(_TrimLineEnds(console))
    return console
