"""How js-yaml 4.2.0's dumper writes one string: plain, single-quoted, double-quoted, literal or folded.

dsh prints ``--dump-config`` with js-yaml, so this follows js-yaml's own decisions (YAML 1.2 character
classes, its ``lineWidth`` 80 that shrinks with depth down to 40, its greedy folding, its escapes), not
what would merely be valid YAML. JavaScript strings are UTF-16: every width and index here counts UTF-16
code units, so a string holding astral characters is processed as a UTF-16 image (``utf16.to_utf16``) and
turned back at the end.
"""
from __future__ import annotations

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
_FLOW_INDICATORS = frozenset(map(ord, ",[]{}"))
_SPACE, _TAB, _LF, _COLON, _SHARP, _BOM = 0x20, 0x09, 0x0A, 0x3A, 0x23, 0xFEFF
_BREAK = re.compile(r" [^ ]")
_CHUNK = re.compile(r"(\n+)([^\n]*)")


def is_printable(c: int) -> bool:
    return (0x20 <= c <= 0x7E or (0xA1 <= c <= 0xD7FF and c not in (0x2028, 0x2029))
            or (0xE000 <= c <= 0xFFFD and c != _BOM) or 0x10000 <= c <= 0x10FFFF)


def _ns_char_or_white(c: int) -> bool:
    return is_printable(c) and c != _BOM and c not in (0x0D, _LF)


def _white(c: int) -> bool:
    return c in (_SPACE, _TAB)


def _plain_safe(c: int, prev: int, in_block: bool) -> bool:
    c_ok = _ns_char_or_white(c)
    c_ns = c_ok and not _white(c)
    safe = c_ok if in_block else c_ok and c not in _FLOW_INDICATORS
    return ((safe and c != _SHARP and not (prev == _COLON and not c_ns))
            or (_ns_char_or_white(prev) and not _white(prev) and c == _SHARP)
            or (prev == _COLON and c_ns))


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


def choose_style(s: str, single_line: bool, width: int, ambiguous: Callable[[str], bool],
                 in_block: bool) -> int:
    """js-yaml's ``chooseScalarStyle`` (quoting type single, no forced quotes); ``s`` is UTF-16."""
    points = list(_code_points(s))
    plain = _plain_safe_first(points[0][1]) and not _white(points[-1][1]) and points[-1][1] != _COLON
    has_break = foldable = False
    prev_break = -1
    prev = -1
    for i, c in points:
        if c == _LF and not single_line:
            has_break = True
            if width != -1:
                foldable = foldable or (i - prev_break - 1 > width and s[prev_break + 1] != " ")
                prev_break = i
        elif not is_printable(c):
            return DOUBLE
        plain = plain and _plain_safe(c, prev, in_block)
        prev = c
    if not single_line and width != -1:
        foldable = foldable or (len(s) - prev_break - 1 > width and s[prev_break + 1] != " ")
    if not has_break and not foldable:
        return PLAIN if plain and not ambiguous(from_utf16(s)) else SINGLE
    return FOLDED if foldable else LITERAL


def write_scalar(text: str, level: int, *, key: bool, in_block: bool,
                 ambiguous: Callable[[str], bool], single_line: bool = False,
                 keep_chomping: bool = True, line_width: int = LINE_WIDTH) -> str:
    """js-yaml's ``writeScalar`` for a string at nesting ``level`` (``line_width`` -1: no folding)."""
    if not text:
        return "''"
    if text in _DEPRECATED_BOOLEANS or _BASE60.fullmatch(text):
        return f"'{text}'"
    s = to_utf16(text)
    indent = INDENT * max(1, level)
    width = -1 if line_width == -1 else max(min(line_width, 40), line_width - indent)
    style = choose_style(s, key or single_line, width, ambiguous, in_block)
    if style == PLAIN:
        return text
    if style == SINGLE:
        return "'" + text.replace("'", "''") + "'"
    header = _block_header(s) if style in (LITERAL, FOLDED) else ""
    if style == DOUBLE or "+" in header and not keep_chomping:
        return '"' + _escape(s) + '"'
    body = s if style == LITERAL else _fold(s, width)
    head = ("|" if style == LITERAL else ">") + header
    return head + from_utf16(_drop_ending_newline(_indent_lines(body, indent)))


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
