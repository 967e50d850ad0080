"""Block scalars (``|``, ``|-``, ``>``, ``>-``, perhaps after ``!!js``) for ``blockscan``.

Prompts and long ``!!js`` expressions are written this way in real presets. The subset read here is
where libyaml and js-yaml agree on the text (``tests/test_blockscan.py`` holds the fast tree equal to
the full path's, which asks js-yaml about every block scalar): an automatically detected
indentation deeper than the collection holding the scalar, lines that are either empty or at least
that deep, no whitespace-only line, no more-indented line in a folded scalar, no keep (``+``)
chomping, no explicit indentation digit, and a line break after the last line. Anything else raises
``Unsupported`` and the event builder reads the file.
"""
from __future__ import annotations

from typing import Any

from dshctl.core.yaml.blocktokens import Unsupported
from dshctl.core.yaml.nodes import JsExpr
from dshctl.errors import Loc

PENDING = object()  # what a block scalar's value is until its lines are read (``BlockText.place``)


def open_block(s: str, v: int) -> tuple[bool, bool]:
    """The header at ``s[v]`` (``|`` or ``>``): (folded, strip). Anything but ``|``/``>``, an
    optional ``-``, then nothing or a comment is outside the subset."""
    folded = s[v] == ">"
    rest = s[v + 1:]
    strip = rest[:1] == "-"
    if strip:
        rest = rest[1:]
    if rest and not (rest[0] == " " and rest.lstrip(" ")[:1] in ("", "#")):
        raise Unsupported  # `+`, an indentation digit, or text after the indicator
    return folded, strip


class BlockText:
    """The lines of one block scalar as ``blockscan`` reads them, then its value in place."""

    __slots__ = ("loc", "js", "folded", "strip", "parent", "indent", "leading", "empty", "parts",
                 "container", "slot", "last_content")

    def __init__(self, loc: Loc, js: bool, folded: bool, strip: bool):
        self.loc, self.js, self.folded, self.strip = loc, js, folded, strip
        self.parent = -1  # the column of the collection holding the scalar
        self.indent = 0  # of the content, set by its first non-empty line
        self.leading = 0  # empty lines before the first content line
        self.empty = 0  # empty lines since the last content line
        self.parts: list[tuple[int, str]] = []  # (empty lines before it, a content line's text)
        self.container: Any = None
        self.slot: Any = None
        self.last_content = False

    def place(self, container: Any, slot: Any, parent: int) -> None:
        """Where the value goes (``container[slot]``, holding ``PENDING`` until ``finish``)."""
        self.container, self.slot, self.parent = container, slot, parent

    def take(self, s: str) -> bool:
        """True when line ``s`` belongs to the scalar; False when it ends it (the line is then
        read as structure, after ``finish``)."""
        if not s:
            if self.parts:
                self.empty += 1
            else:
                self.leading += 1
            self.last_content = False
            return True
        body = s.lstrip(" ")
        column = len(s) - len(body)
        if not body:
            raise Unsupported  # a whitespace-only line: the two parsers detect indentation apart
        if not self.parts:
            if column <= self.parent:
                raise Unsupported  # an empty block scalar
            self.indent = column
        elif column < self.indent:
            return False
        text = s[self.indent:]
        if self.folded and text[0] == " ":
            raise Unsupported  # a more-indented line keeps its breaks in a folded scalar
        self.parts.append((self.empty, text))
        self.empty = 0
        self.last_content = True
        return True

    def finish(self) -> None:
        parts = self.parts
        if not parts:
            raise Unsupported
        pieces = ["\n" * self.leading, parts[0][1]]
        if self.folded:
            for empty, text in parts[1:]:
                pieces.append("\n" * empty if empty else " ")
                pieces.append(text)
        else:
            for empty, text in parts[1:]:
                pieces.append("\n" * (empty + 1))
                pieces.append(text)
        if not self.strip:
            pieces.append("\n")
        value = "".join(pieces)
        self.container[self.slot] = JsExpr(value, self.loc) if self.js else value

    def finish_at_end(self) -> None:
        """The text ended inside the scalar: read only when a line break follows its last line."""
        if self.last_content:
            raise Unsupported
        self.finish()
