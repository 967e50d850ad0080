"""The character-level half of the port: positions, whitespace and line breaks, and the four scalar
readers (plain, single-quoted, double-quoted, block), as js-yaml's loader.js has them.

``c(p)`` is ``charCodeAt``: -1 plays JavaScript's NaN past the end. The readers call back into
``compose`` (defined by the loader), as js-yaml's functions do.
"""
from __future__ import annotations

import re
from typing import Any

from dshctl.core.yaml.utf16 import to_utf16

from .types import JsYamlError, Schema

FLOW_IN, FLOW_OUT, BLOCK_IN, BLOCK_OUT = 1, 2, 3, 4
CLIP, STRIP, KEEP = 1, 2, 3

# A lone low surrogate is found with a look-behind: the negated class `[^\ud800-\udbff]` took
# ~30 ms to compile (start-up time of every command that reads YAML through the port).
_NON_PRINTABLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])"
    "|(?<![\ud800-\udbff])[\udc00-\udfff]")
_SIMPLE_ESCAPES = {0x30: "\x00", 0x61: "\x07", 0x62: "\x08", 0x74: "\t", 0x09: "\t", 0x6E: "\n",
                   0x76: "\x0b", 0x66: "\x0c", 0x72: "\r", 0x65: "\x1b", 0x20: " ", 0x22: '"', 0x2F: "/",
                   0x5C: "\\", 0x4E: "\x85", 0x5F: "\xa0", 0x4C: "\u2028", 0x50: "\u2029"}


def _ws(c: int) -> bool:
    return c == 0x09 or c == 0x20


def _eol(c: int) -> bool:
    return c == 0x0A or c == 0x0D


def _ws_or_eol(c: int) -> bool:
    return c in (0x09, 0x20, 0x0A, 0x0D)


def _flow(c: int) -> bool:
    return c in (0x2C, 0x5B, 0x5D, 0x7B, 0x7D)


def _hex(c: int) -> int:
    if 0x30 <= c <= 0x39:
        return c - 0x30
    lc = c | 0x20
    return lc - 0x61 + 10 if 0x61 <= lc <= 0x66 else -1


def _int32(x: int) -> int:
    return ((x + 2**31) % 2**32) - 2**31


def _char_from_code_point(c: int) -> str:
    """js-yaml's ``charFromCodepoint`` with ``String.fromCharCode``'s wrap-around to 16 bits."""
    if c <= 0xFFFF:
        return chr(c % 0x10000)
    d = _int32(c - 0x10000)
    return chr(((d >> 10) + 0xD800) % 0x10000) + chr(((d & 0x3FF) + 0xDC00) % 0x10000)


class Reader:
    """State and the character-level readers (js-yaml's State plus its scanning functions)."""

    def __init__(self, text: str, schema: Schema):
        if text and text[-1] not in "\n\r":
            text += "\n"
        if text.startswith("\ufeff"):
            text = text[1:]
        self.schema = schema
        self.s = to_utf16(text)
        self.length = len(self.s)
        self.position = self.line = self.line_start = self.line_indent = self.depth = 0
        self.first_tab = -1
        self.docs: list = []
        self.transactions: list[dict] = []
        self.tag = self.anchor = self.kind = self.result = None

    # --- plumbing ---------------------------------------------------------------------------

    def c(self, p: int) -> int:
        return ord(self.s[p]) if 0 <= p < len(self.s) else -1  # -1 plays JavaScript's NaN

    def error(self, reason: str) -> JsYamlError:
        return JsYamlError(reason, self.line + 1, self.position - self.line_start + 1)

    def snapshot(self) -> tuple:
        return (self.position, self.line, self.line_start, self.line_indent, self.first_tab, self.tag,
                self.anchor, self.kind, self.result)

    def restore(self, snap: tuple) -> None:
        (self.position, self.line, self.line_start, self.line_indent, self.first_tab, self.tag,
         self.anchor, self.kind, self.result) = snap

    def store_anchor(self, name: str, value: Any) -> None:
        if self.transactions:
            tx = self.transactions[-1]
            if name not in tx:
                tx[name] = (name in self.anchor_map, self.anchor_map.get(name))
        self.anchor_map[name] = value

    def commit_anchors(self) -> None:
        tx = self.transactions.pop()
        if self.transactions:
            parent = self.transactions[-1]
            for name, entry in tx.items():
                parent.setdefault(name, entry)

    def rollback_anchors(self) -> None:
        tx = self.transactions.pop()
        for name in reversed(list(tx)):
            existed, value = tx[name]
            if existed:
                self.anchor_map[name] = value
            else:
                del self.anchor_map[name]

    # --- directives and documents -----------------------------------------------------------

    def read_line_break(self) -> None:
        ch = self.c(self.position)
        if ch == 0x0A:
            self.position += 1
        elif ch == 0x0D:
            self.position += 1
            if self.c(self.position) == 0x0A:
                self.position += 1
        else:
            raise self.error("a line break is expected")
        self.line += 1
        self.line_start = self.position
        self.first_tab = -1

    def skip_space(self, comments: bool, check_indent: int) -> int:
        breaks = 0
        ch = self.c(self.position)
        while ch != 0:
            while _ws(ch):
                if ch == 0x09 and self.first_tab == -1:
                    self.first_tab = self.position
                self.position += 1
                ch = self.c(self.position)
            if comments and ch == 0x23:
                while True:
                    self.position += 1
                    ch = self.c(self.position)
                    if ch in (0x0A, 0x0D, 0):
                        break
            if _eol(ch):
                self.read_line_break()
                ch = self.c(self.position)
                breaks += 1
                self.line_indent = 0
                while ch == 0x20:
                    self.line_indent += 1
                    self.position += 1
                    ch = self.c(self.position)
            else:
                break
        return breaks  # "deficient indentation" is only a warning

    def document_separator(self) -> bool:
        p = self.position
        ch = self.c(p)
        if ch in (0x2D, 0x2E) and ch == self.c(p + 1) and ch == self.c(p + 2):
            ch = self.c(p + 3)
            return ch == 0 or _ws_or_eol(ch)
        return False

    def folded_lines(self, count: int) -> None:
        if count == 1:
            self.result += " "
        elif count > 1:
            self.result += "\n" * (count - 1)

    def capture(self, start: int, end: int, check_json: bool) -> None:
        if start < end:
            part = self.s[start:end]
            if check_json:
                for ch in part:
                    o = ord(ch)
                    if not (o == 0x09 or 0x20 <= o <= 0x10FFFF):
                        raise self.error("expected valid JSON character")
            elif _NON_PRINTABLE.search(part):
                raise self.error("the stream contains non-printable characters")
            self.result += part

    # --- scalars ----------------------------------------------------------------------------

    def read_plain(self, node_indent: int, in_flow: bool) -> bool:
        kind, result = self.kind, self.result
        ch = self.c(self.position)
        if _ws_or_eol(ch) or _flow(ch) or ch in (0x23, 0x26, 0x2A, 0x21, 0x7C, 0x3E, 0x27, 0x22, 0x25,
                                                 0x40, 0x60):
            return False
        if ch in (0x3F, 0x2D):
            following = self.c(self.position + 1)
            if _ws_or_eol(following) or (in_flow and _flow(following)):
                return False
        self.kind = "scalar"
        self.result = ""
        cap_start = cap_end = self.position
        pending = False
        line = line_start = line_indent = 0
        while ch != 0:
            if ch == 0x3A:
                following = self.c(self.position + 1)
                if _ws_or_eol(following) or (in_flow and _flow(following)):
                    break
            elif ch == 0x23:
                if _ws_or_eol(self.c(self.position - 1)):
                    break
            elif (self.position == self.line_start and self.document_separator()) or (in_flow and _flow(ch)):
                break
            elif _eol(ch):
                line, line_start, line_indent = self.line, self.line_start, self.line_indent
                self.skip_space(False, -1)
                if self.line_indent >= node_indent:
                    pending = True
                    ch = self.c(self.position)
                    continue
                self.position = cap_end
                self.line, self.line_start, self.line_indent = line, line_start, line_indent
                break
            if pending:
                self.capture(cap_start, cap_end, False)
                self.folded_lines(self.line - line)
                cap_start = cap_end = self.position
                pending = False
            if not _ws(ch):
                cap_end = self.position + 1
            self.position += 1
            ch = self.c(self.position)
        self.capture(cap_start, cap_end, False)
        if self.result:
            return True
        self.kind, self.result = kind, result
        return False

    def read_single_quoted(self, node_indent: int) -> bool:
        if self.c(self.position) != 0x27:
            return False
        self.kind = "scalar"
        self.result = ""
        self.position += 1
        cap_start = cap_end = self.position
        while (ch := self.c(self.position)) != 0:
            if ch == 0x27:
                self.capture(cap_start, self.position, True)
                self.position += 1
                if self.c(self.position) == 0x27:
                    cap_start = self.position
                    self.position += 1
                    cap_end = self.position
                else:
                    return True
            elif _eol(ch):
                self.capture(cap_start, cap_end, True)
                self.folded_lines(self.skip_space(False, node_indent))
                cap_start = cap_end = self.position
            elif self.position == self.line_start and self.document_separator():
                raise self.error("unexpected end of the document within a single quoted scalar")
            else:
                self.position += 1
                if not _ws(ch):
                    cap_end = self.position
        raise self.error("unexpected end of the stream within a single quoted scalar")

    def read_double_quoted(self, node_indent: int) -> bool:
        if self.c(self.position) != 0x22:
            return False
        self.kind = "scalar"
        self.result = ""
        self.position += 1
        cap_start = cap_end = self.position
        while (ch := self.c(self.position)) != 0:
            if ch == 0x22:
                self.capture(cap_start, self.position, True)
                self.position += 1
                return True
            if ch == 0x5C:
                self.capture(cap_start, self.position, True)
                self.position += 1
                ch = self.c(self.position)
                if _eol(ch):
                    self.skip_space(False, node_indent)
                elif ch in _SIMPLE_ESCAPES:
                    self.result += _SIMPLE_ESCAPES[ch]
                    self.position += 1
                elif ch in (0x78, 0x75, 0x55):
                    value = 0
                    for _ in range({0x78: 2, 0x75: 4, 0x55: 8}[ch]):
                        self.position += 1
                        digit = _hex(self.c(self.position))
                        if digit < 0:
                            raise self.error("expected hexadecimal character")
                        value = _int32(value << 4) + digit  # JavaScript's 32-bit `<<`
                    self.result += _char_from_code_point(value)
                    self.position += 1
                else:
                    raise self.error("unknown escape sequence")
                cap_start = cap_end = self.position
            elif _eol(ch):
                self.capture(cap_start, cap_end, True)
                self.folded_lines(self.skip_space(False, node_indent))
                cap_start = cap_end = self.position
            elif self.position == self.line_start and self.document_separator():
                raise self.error("unexpected end of the document within a double quoted scalar")
            else:
                self.position += 1
                if not _ws(ch):
                    cap_end = self.position
        raise self.error("unexpected end of the stream within a double quoted scalar")

    def read_block_scalar(self, node_indent: int) -> bool:
        ch = self.c(self.position)
        if ch not in (0x7C, 0x3E):
            return False
        folding = ch == 0x3E
        chomping, did_read, detected, text_indent, empty, more_indented = CLIP, False, False, node_indent, 0, False
        self.kind = "scalar"
        self.result = ""
        while ch != 0:
            self.position += 1
            ch = self.c(self.position)
            if ch in (0x2B, 0x2D):
                if chomping != CLIP:
                    raise self.error("repeat of a chomping mode identifier")
                chomping = KEEP if ch == 0x2B else STRIP
            elif 0x30 <= ch <= 0x39:
                if ch == 0x30:
                    raise self.error("bad explicit indentation width of a block scalar; it cannot be less than one")
                if detected:
                    raise self.error("repeat of an indentation width identifier")
                text_indent = node_indent + (ch - 0x30) - 1
                detected = True
            else:
                break
        if _ws(ch):
            while True:
                self.position += 1
                ch = self.c(self.position)
                if not _ws(ch):
                    break
            if ch == 0x23:
                while True:
                    self.position += 1
                    ch = self.c(self.position)
                    if _eol(ch) or ch == 0:
                        break
        while ch != 0:
            self.read_line_break()
            self.line_indent = 0
            ch = self.c(self.position)
            while (not detected or self.line_indent < text_indent) and ch == 0x20:
                self.line_indent += 1
                self.position += 1
                ch = self.c(self.position)
            if not detected and self.line_indent > text_indent:
                text_indent = self.line_indent
            if _eol(ch):
                empty += 1
                continue
            if not detected and text_indent == 0:
                raise self.error("missing indentation for block scalar")
            if self.line_indent < text_indent:
                if chomping == KEEP:
                    self.result += "\n" * (1 + empty if did_read else empty)
                elif chomping == CLIP and did_read:
                    self.result += "\n"
                break
            if folding:
                if _ws(ch):
                    more_indented = True
                    self.result += "\n" * (1 + empty if did_read else empty)
                elif more_indented:
                    more_indented = False
                    self.result += "\n" * (empty + 1)
                elif empty == 0:
                    if did_read:
                        self.result += " "
                else:
                    self.result += "\n" * empty
            else:
                self.result += "\n" * (1 + empty if did_read else empty)
            did_read = detected = True
            empty = 0
            start = self.position
            while not _eol(ch) and ch != 0:
                self.position += 1
                ch = self.c(self.position)
            self.capture(start, self.position, False)
        return True

    # --- collections ------------------------------------------------------------------------
