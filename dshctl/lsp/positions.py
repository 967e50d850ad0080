"""Positions between dshctl's (1-based line and column, counted in characters) and LSP's (0-based
line, ``character`` counted in UTF-16 code units, the protocol's default position encoding)."""
from __future__ import annotations

from dshctl.core.yaml.utf16 import utf16_len


def lines_of(text: str) -> list[str]:
    """The lines of ``text`` without their ends (``\\r\\n``, ``\\n`` or ``\\r``, as LSP counts lines)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def to_utf16_column(line: str, column: int) -> int:
    """0-based character index ``column`` of ``line`` -> its UTF-16 offset."""
    return utf16_len(line[:column])


def from_utf16_column(line: str, character: int) -> int:
    """A UTF-16 offset into ``line`` -> the 0-based character index (inside a pair: the pair's start)."""
    units = 0
    for index, ch in enumerate(line):
        width = 2 if ord(ch) > 0xFFFF else 1
        if units + width > character:
            return index
        units += width
    return len(line)


def token_end(line: str, start: int) -> int:
    """Where the YAML token that begins at ``start`` ends: a quoted scalar to its closing quote, else
    the plain word up to a space, a flow indicator or a comment. At least one character when the line
    has one, so that an editor underlines something."""
    if start >= len(line):
        return start
    quote = line[start]
    if quote in "\"'":
        i = start + 1
        while i < len(line):
            if line[i] == "\\" and quote == '"':
                i += 2
                continue
            if line[i] == quote:
                if quote == "'" and i + 1 < len(line) and line[i + 1] == "'":
                    i += 2
                    continue
                return i + 1
            i += 1
        return len(line)
    i = start
    while i < len(line) and line[i] not in " \t,[]{}" and not (line[i] == ":" and line[i + 1:i + 2] in ("", " ")):
        i += 1
    return max(i, start + 1)
