"""A strict JSON parser that records positions (the stdlib parser does not).

String and number scanning reuse the stdlib's C scanners; only the structure is walked here.
"""
from __future__ import annotations

import bisect
import json.decoder
import re
from typing import Any

from dshctl.core.yaml.nodes import JsExpr, YList, YMap
from dshctl.errors import Loc, ParseError

_scanstring = json.decoder.scanstring
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_WS = re.compile(r"[ \t\n\r]*")
MAX_DEPTH = 200
# Longer integer literals are beyond a double (JSON.parse gives Infinity) and beyond the 4,300 digits
# Python converts from text; float() gives the same Infinity without that limit.
_MAX_INT_DIGITS = 310


class _Parser:
    def __init__(self, text: str, path: str, notes: list):
        self.text = text
        self.path = path
        self.notes = notes
        # Offsets of line starts, for offset -> (line, col).
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def loc(self, pos: int) -> Loc:
        i = bisect.bisect_right(self.starts, pos) - 1
        return Loc(self.path, i + 1, pos - self.starts[i] + 1)

    def fail(self, message: str, pos: int, hint: str = "fix the JSON syntax at that position") -> ParseError:
        return ParseError(message, loc=self.loc(pos), hint=hint)

    def ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        text = self.text
        if pos >= len(text):
            raise self.fail("unexpected end of JSON input", pos)
        c = text[pos]
        if c == "{":
            return self.obj(pos, depth + 1)
        if c == "[":
            return self.arr(pos, depth + 1)
        if c == '"':
            try:
                return _scanstring(text, pos + 1, True)
            except ValueError as exc:
                raise self.fail(str(exc).split(":")[0], pos) from None
        for word, val in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, pos):
                return val, pos + len(word)
        m = _NUMBER.match(text, pos)
        if m and m.end() > pos:
            s = m.group(0)
            if m.group(1) or m.group(2) or len(s) > _MAX_INT_DIGITS:
                return float(s), m.end()  # JSON.parse: a number too big for a double is Infinity
            return int(s), m.end()
        raise self.fail(f"unexpected token {text[pos]!r} in JSON", pos)

    def obj(self, pos: int, depth: int) -> tuple[Any, int]:
        if depth > MAX_DEPTH:
            raise self.fail(f"nesting deeper than {MAX_DEPTH} levels", pos, hint="flatten the structure")
        node = YMap(loc=self.loc(pos))
        pos = self.ws(pos + 1)
        if self.text.startswith("}", pos):
            return node, pos + 1
        while True:
            if not self.text.startswith('"', pos):
                raise self.fail("expected a double-quoted property name", pos)
            key_pos = pos
            key, pos = self.value(pos, depth)
            pos = self.ws(pos)
            if not self.text.startswith(":", pos):
                raise self.fail("expected ':' after property name", pos)
            pos = self.ws(pos + 1)
            val_pos = pos
            val, pos = self.value(pos, depth)
            if key in node:
                self.notes.append(_dup_note(key, self.loc(key_pos)))
            node[key] = val
            node.key_locs[key] = self.loc(key_pos)
            node.value_locs[key] = self.loc(val_pos)
            pos = self.ws(pos)
            if self.text.startswith(",", pos):
                pos = self.ws(pos + 1)
                continue
            if self.text.startswith("}", pos):
                pos += 1
                break
            raise self.fail("expected ',' or '}' in object", pos)
        if set(node) == {"__jsExpr"} and isinstance(node["__jsExpr"], str):
            return JsExpr(node["__jsExpr"], node.loc), pos
        return node, pos

    def arr(self, pos: int, depth: int) -> tuple[Any, int]:
        if depth > MAX_DEPTH:
            raise self.fail(f"nesting deeper than {MAX_DEPTH} levels", pos, hint="flatten the structure")
        node = YList(loc=self.loc(pos))
        pos = self.ws(pos + 1)
        if self.text.startswith("]", pos):
            return node, pos + 1
        while True:
            node.item_locs.append(self.loc(pos))
            val, pos = self.value(pos, depth)
            node.append(val)
            pos = self.ws(pos)
            if self.text.startswith(",", pos):
                pos = self.ws(pos + 1)
                continue
            if self.text.startswith("]", pos):
                return node, pos + 1
            raise self.fail("expected ',' or ']' in array", pos)


def _dup_note(key: str, loc: Loc):
    from dshctl.core.yaml.dialect import Note

    return Note("json-duplicate-key", f"duplicate key {key!r}: JSON.parse keeps the last one", loc)


def parse_json(text: str, path: str, notes: list) -> Any:
    p = _Parser(text, path, notes)
    pos = p.ws(0)
    value, pos = p.value(pos, 0)
    pos = p.ws(pos)
    if pos != len(text):
        raise p.fail("unexpected content after the JSON value", pos)
    return value
