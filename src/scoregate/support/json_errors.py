"""Say in words what is wrong with text that is not JSON, and where: `json`'s own messages are terse and odd.

`json` writes "Invalid control character at: line 1 column 201 (char 200)" for a line cut off inside a
string; a user reads "not valid JSON: the line ends at column 200 inside an unclosed string (was it cut off?)".
"""

from __future__ import annotations

import json
from typing import Literal

Unit = Literal["line", "file"]

_CONTROL_NAMES = {"\t": ("a tab", "\\t"), "\n": ("a line break", "\\n"), "\r": ("a carriage return", "\\r")}


def json_problem(error: json.JSONDecodeError, *, unit: Unit = "line", located: bool = True) -> str:
    """Return `not valid JSON: <what is wrong> at <column>` for `error`, raised reading one line or a whole file.

    `located=False` leaves the position out, for a caller that names it as `file:line:column` itself
    (`json_position`).
    """
    pos = _problem_pos(error)
    at = f" at {_where(error.doc, pos, unit)}" if located else ""
    return f"not valid JSON: {_what(error, unit, at)}"


def json_position(error: json.JSONDecodeError) -> tuple[int, int]:
    """Return the 1-based (line, column) that `json_problem` speaks of: the end of the text when it is cut off."""
    pos = _problem_pos(error)
    line_start = error.doc.rfind("\n", 0, pos) + 1
    return error.doc.count("\n", 0, pos) + 1, pos - line_start + 1


def _cut_off(error: json.JSONDecodeError) -> bool:
    """Whether the text ends before its JSON does (a string never closed, or nothing after the problem)."""
    if error.msg == "Extra data":
        return False
    return error.msg.startswith("Unterminated string") or not error.doc[error.pos :].strip()


def _problem_pos(error: json.JSONDecodeError) -> int:
    return max(len(error.doc.rstrip()) - 1, 0) if _cut_off(error) else error.pos


def _what(error: json.JSONDecodeError, unit: Unit, at: str) -> str:
    doc, pos, msg = error.doc, error.pos, error.msg
    if not doc.strip():
        return f"the {unit} is empty"
    if _cut_off(error):
        unclosed = msg.startswith(("Unterminated string", "Invalid control character"))
        inside = "inside an unclosed string" if unclosed else "before the JSON value is complete"
        return f"the {unit} ends{at} {inside} (was it cut off?)"
    char = doc[pos] if pos < len(doc) else ""
    if msg.startswith("Invalid control character"):
        name, escape = _CONTROL_NAMES.get(char, (f"the control character U+{ord(char):04X}", f"\\u{ord(char):04x}"))
        return f"{name} inside a string{at} (write it as {escape})"
    if msg.startswith("Expecting property name") or msg == "Expecting value":
        if char in ("}", "]"):
            return f"a comma before the {char}{at} has nothing after it (JSON allows no trailing comma)"
        if char == "'":
            return f"a string in single quotes{at} (JSON needs double quotes)"
        if msg.startswith("Expecting property name"):
            return f"a key without double quotes{at} (JSON needs double quotes)"
        return f"a value is missing or misspelled{at} (a string needs double quotes; true, false, null are lower case)"
    if msg == "Expecting ',' delimiter":
        return f'a comma is missing{at} (or a " inside a string is not written as \\")'
    if msg == "Expecting ':' delimiter":
        return f"a colon is missing after the key{at}"
    if msg == "Extra data":
        one = "one JSON object per line" if unit == "line" else "one JSON value per file"
        return f"more text after the JSON value{at.replace(' at ', ', from ')} ({one})"
    if msg == "Invalid \\escape":
        return f"an unknown backslash escape{at} (write a backslash itself as \\\\)"
    if msg == "Invalid \\uXXXX escape":
        return f"a \\u escape without four hex digits{at}"
    return f"{msg.removesuffix(' at')}{at}"


def _where(doc: str, pos: int, unit: Unit) -> str:
    """`column C` within a line, `line L, column C` within a file (1-based)."""
    column = pos - (doc.rfind("\n", 0, pos) + 1) + 1
    return f"column {column}" if unit == "line" else f"line {doc.count(chr(10), 0, pos) + 1}, column {column}"
