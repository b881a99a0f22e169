"""A tiny terminal for tests: replays what a program wrote to a pseudo-terminal (text, CR, LF, the erase-line and
cursor-up codes rich's live display sends, line wrap at the width) and returns the screen's lines as a person
would read them afterwards."""

from __future__ import annotations

import re

_CODE = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")


def screen(output: str, width: int) -> list[str]:
    """The lines on the screen after `output` was written to a terminal `width` columns wide (no scrollback cut)."""
    lines: list[list[str]] = [[]]
    row = col = 0
    pos = 0
    while pos < len(output):
        match = _CODE.match(output, pos)
        if match is not None:
            args, code = match.groups()
            if code == "K":  # erase in line (rich sends 2K: the whole line)
                lines[row] = [] if args in ("2", "") else lines[row][:col]
            elif code == "A":  # cursor up
                row = max(0, row - int(args or 1))
            elif code == "G":  # cursor to column
                col = int(args or 1) - 1
            pos = match.end()
            continue
        char = output[pos]
        pos += 1
        if char == "\r":
            col = 0
        elif char == "\n":
            row += 1
            col = 0
        elif char >= " ":
            if col >= width:  # the terminal wraps to the next line
                row, col = row + 1, 0
            while len(lines) <= row:
                lines.append([])
            line = lines[row]
            line.extend(" " * (col - len(line)))
            if col < len(line):
                line[col] = char
            else:
                line.append(char)
            col += 1
        while len(lines) <= row:
            lines.append([])
    return ["".join(line).rstrip() for line in lines]
