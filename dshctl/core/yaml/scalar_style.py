"""How js-yaml 4.2.0's dumper writes one string: plain, single-quoted, double-quoted, literal or folded.

dsh prints ``--dump-config`` with js-yaml, so this follows js-yaml's own decisions (YAML 1.2 character
classes, its ``lineWidth`` 80 that shrinks with depth down to 40, its greedy folding, its escapes), not
what would merely be valid YAML. JavaScript strings are UTF-16: every width and index here counts UTF-16
code units, so a string holding astral characters is processed as a UTF-16 image (``utf16.to_utf16``) and
turned back at the end.
"""
from __future__ import annotations

import functools
import re
from typing import Callable

from dshctl.core.yaml.utf16 import from_utf16, to_utf16

LINE_WIDTH = 80
INDENT = 2

PLAIN, SINGLE, LITERAL, FOLDED, DOUBLE = range(1, 6)

_ESCAPES = {0x00: "\\0", 0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f",
            0x0D: "\\r", 0x1B: "\\e", 0x22: '\\"', 0x5C: "\\\\", 0x85: "\\N", 0xA0: "\\_",
            0x2028: "\\L", 0x2029: "\\P"}
# YAML 1.1 booleans and sexagesimal numbers: js-yaml quotes them so old readers keep them strings.
_DEPRECATED_BOOLEANS = frozenset("y Y yes Yes YES on On ON n N no No NO off Off OFF".split())
_BASE60 = re.compile(r"[-+]?[0-9_]+(?::[0-9_]+)+(?:\.[0-9_]*)?")
_FIRST_FORBIDDEN = frozenset(map(ord, "-?:,[]{}#&*!|=>'\"%@`"))
_SPACE, _TAB, _BOM = 0x20, 0x09, 0xFEFF
_BREAK = re.compile(r" [^ ]")
_CHUNK = re.compile(r"(\n+)([^\n]*)")


def is_printable(c: int) -> bool:
    return (0x20 <= c <= 0x7E or (0xA1 <= c <= 0xD7FF and c not in (0x2028, 0x2029))
            or (0xE000 <= c <= 0xFFFD and c != _BOM) or 0x10000 <= c <= 0x10FFFF)


def _white(c: int) -> bool:
    return c in (_SPACE, _TAB)


def _plain_safe_first(c: int) -> bool:
    return is_printable(c) and c != _BOM and not _white(c) and c not in _FIRST_FORBIDDEN


def _code_points(s: str):
    """(index, code point) over a UTF-16 image, pairing surrogates as ``codePointAt`` does."""
    i, n = 0, len(s)
    while i < n:
        first = ord(s[i])
        if 0xD800 <= first <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(s[i + 1]) <= 0xDFFF:
            yield i, (first - 0xD800) * 0x400 + ord(s[i + 1]) - 0xDC00 + 0x10000
            i += 2
        else:
            yield i, first
            i += 1


# Characters js-yaml's isPrintable refuses (with and without the line feed block styles may hold).
# It accepts 0x20-0x7E, 0xA1-0xD7FF but the line and paragraph separators, 0xE000-0xFFFD but the
# BOM, and the astral planes; these classes spell out the (short) complement, which compiles in a
# tenth of the time of the negated printable ranges (start-up time; tests/test_emit_node.py).
_UNPRINTABLE_BLOCK = re.compile("[\x00-\x09\x0b-\x1f\x7f-\xa0\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_UNPRINTABLE_LINE = re.compile("[\x00-\x1f\x7f-\xa0\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_NOT_PLAIN = re.compile(r" #|: ")  # a comment start, a mapping separator
# Ids, names, hosts: printable, no indicator, quote, space or flow character anywhere, and no longer
# than the narrowest fold width (40), so plain unless the text reads as another type.
_SHORT_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]{0,39}\Z")
_FLOW_CHARS = re.compile(r"[,\[\]{}]")


def choose_style(s: str, single_line: bool, width: int, ambiguous: Callable[[str], bool],
                 in_block: bool) -> int:
    """js-yaml's ``chooseScalarStyle`` (quoting type single, no forced quotes); ``s`` is UTF-16.

    js-yaml walks the string once, character by character; the same decisions are made here with
    whole-string tests: unprintable -> double quotes; a line break or a line longer than ``width``
    (not starting with a space) -> literal or folded; else plain when every character may stand
    unquoted and the text does not read as another type, single quotes otherwise."""
    text = from_utf16(s)  # code points, pairs joined: what isPrintable judges
    if (_UNPRINTABLE_LINE if single_line else _UNPRINTABLE_BLOCK).search(text):
        return DOUBLE
    has_break = not single_line and "\n" in s
    foldable = not single_line and width != -1 and any(
        len(line) > width and line[:1] != " " for line in s.split("\n"))
    if has_break or foldable:
        return FOLDED if foldable else LITERAL
    plain = (_plain_safe_first(ord(text[0])) and text[-1] not in " \t:" and not _NOT_PLAIN.search(text)
             and (in_block or not _FLOW_CHARS.search(text)))
    return PLAIN if plain and not ambiguous(text) else SINGLE


@functools.lru_cache(maxsize=65536)  # ids, names and values repeat across the rows of a dump
def write_scalar(text: str, level: int, *, key: bool, in_block: bool,
                 ambiguous: Callable[[str], bool], single_line: bool = False,
                 for_edit: bool = False, line_width: int = LINE_WIDTH) -> str:
    """js-yaml's ``writeScalar`` for a string at nesting ``level`` (``line_width`` -1: no folding)."""
    if not text:
        return "''"
    if text in _DEPRECATED_BOOLEANS or _BASE60.fullmatch(text):
        return f"'{text}'"
    if _SHORT_PLAIN.match(text) and not ambiguous(text):
        return text  # what choose_style decides for it, without its whole-string tests
    s = to_utf16(text)
    indent = INDENT * max(1, level)
    width = -1 if line_width == -1 else max(min(line_width, 40), line_width - indent)
    style = choose_style(s, key or single_line, width, ambiguous, in_block)
    if style == PLAIN:
        return text
    if style == SINGLE:
        return "'" + text.replace("'", "''") + "'"
    header = _block_header(s) if style in (LITERAL, FOLDED) else ""
    if style == DOUBLE or for_edit and _fragile_block(s, header):
        return '"' + _escape(s) + '"'
    body = s if style == LITERAL else _fold(s, width)
    head = ("|" if style == LITERAL else ">") + header
    return head + from_utf16(_drop_ending_newline(_indent_lines(body, indent)))


def _fragile_block(s: str, header: str) -> bool:
    """A block scalar that cannot be spliced into an existing file safely: keep chomping (``+``)
    swallows the blank lines after it, and an indentation indicator or a line of only spaces
    makes its end depend on what follows."""
    return "+" in header or header[:1].isdigit() or any(line and not line.strip(" ") for line in s.split("\n"))


def _block_header(s: str) -> str:
    indicator = str(INDENT) if re.match(r"\n* ", s) else ""
    clip = s.endswith("\n")
    keep = clip and (s[-2:-1] == "\n" or s == "\n")
    return indicator + ("+" if keep else "" if clip else "-") + "\n"


def _drop_ending_newline(s: str) -> str:
    return s[:-1] if s.endswith("\n") else s


def _indent_lines(s: str, spaces: int) -> str:
    """Indent every line but empty ones; lines end at ``\n`` only, as in js-yaml."""
    pad = " " * spaces
    parts = s.split("\n")
    lines = [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    return "".join(pad + line if line != "\n" else line for line in lines)


def _fold(s: str, width: int) -> str:
    """js-yaml's ``foldString``: greedy folding that keeps more-indented lines as they are."""
    first_lf = s.find("\n")
    first_lf = len(s) if first_lf == -1 else first_lf
    result = _fold_line(s[:first_lf], width)
    prev_more_indented = s[:1] in ("\n", " ")
    for m in _CHUNK.finditer(s, first_lf):
        prefix, line = m.group(1), m.group(2)
        more_indented = line[:1] == " "
        joiner = "\n" if not prev_more_indented and not more_indented and line != "" else ""
        result += prefix + joiner + _fold_line(line, width)
        prev_more_indented = more_indented
    return result


def _fold_line(line: str, width: int) -> str:
    if line == "" or line[0] == " ":
        return line
    start = curr = 0
    result = ""
    for m in _BREAK.finditer(line):
        nxt = m.start()
        if nxt - start > width:
            end = curr if curr > start else nxt
            result += "\n" + line[start:end]
            start = end + 1
        curr = nxt
    result += "\n"
    if len(line) - start > width and curr > start:
        result += line[start:curr] + "\n" + line[curr + 1:]
    else:
        result += line[start:]
    return result[1:]


def _escape(s: str) -> str:
    out = []
    for i, c in _code_points(s):
        seq = _ESCAPES.get(c)
        if seq is None and is_printable(c):
            out.append(chr(c))
        else:
            out.append(seq or _hex(c))
    return "".join(out)


def _hex(c: int) -> str:
    if c <= 0xFF:
        return f"\\x{c:02X}"
    if c <= 0xFFFF:
        return f"\\u{c:04X}"
    return f"\\U{c:08X}"
