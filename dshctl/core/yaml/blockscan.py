"""A line-oriented reader for the block-style YAML most dsh files are written in.

Real entry lists and patch files use a small part of YAML: block mappings and sequences, one-line
plain, single- and simply double-quoted scalars, ``!!js`` on a scalar, block scalars (``|``, ``|-``,
``>``, ``>-``: prompts, long expressions; ``blocktext``), one-line flow sequences and mappings of such
scalars (``blockflow``), ``[]``/``{}`` and comments. For that subset this reader builds exactly the
tree the full path builds (the event builder, ``eventtree``, from libyaml's events, checked against
js-yaml where the two may part) - the same values, key order and line:col of every node - at a
fraction of the cost and without importing the YAML parser. On the first thing outside it (anchors,
aliases, multi-line flow or quoted scalars, escapes, nested flow collections, directives, document
markers, tabs, CRs, odd indentation, duplicate keys, anything an error message would be about...)
it gives up and the event builder reads the whole text, so every error, warning and position still
comes from there. ``tests/test_blockscan.py`` holds the two equal over generated documents and the
corpus.
"""
from __future__ import annotations

from typing import Any

from dshctl.core.yaml.blocklines import FLOW, FLOW_MAP, JS, MAX_KEY, OPEN_KEY, common_line
from dshctl.core.yaml.blocktext import PENDING, BlockText
from dshctl.core.yaml.blocktokens import (INDICATOR_FIRST, SPACE_FOLLOWED_FIRST, Unsupported, ValueReader,
                                          looks_like_entry, new_list, new_map, quoted_scalar, unusual_text)
from dshctl.core.yaml.nodes import JsExpr
from dshctl.core.yaml.scalars import js_key, resolve_plain
from dshctl.errors import Loc

_MAX_STACK = 90  # well inside the event builder's depth limit (it refuses at MAX_DEPTH - 2)


# Plain scalars, keys and flow sequences repeat within a file and across the files of a profile
# (ids, names, ports, `[a, b]`), and so do whole lines (`    host: 127.0.0.1`): what each text reads
# as is remembered (values are immutable scalars), up to a bound, so a long-running host reading
# many files does not grow without end.
_PLAIN: dict[str, Any] = {}
_KEYS: dict[str, str] = {}
_FLOWS: dict[str, tuple[list, list[int]]] = {}  # `[a, b, 1]` -> its items and their columns
_LINES: dict[str, tuple | bool] = {}  # a line's text -> what read() needs of it (see _common)
_MAX_REMEMBERED = 100_000


class _Frame:
    __slots__ = ("node", "column", "is_map", "key", "key_loc", "empty_loc", "indentless")

    def __init__(self, node, column: int, is_map: bool, indentless: bool = False):
        self.node = node
        self.column = column
        self.is_map = is_map
        self.key = None  # a key whose value is still to come (on the lines below), else None
        self.key_loc = None
        self.empty_loc = None  # where the empty value of ``key`` would start (just past the ':')
        self.indentless = indentless  # a sequence level with its parent key (``key:\n- a``)


def scan(text: str, path: str, js: bool) -> Any:
    """The value tree of ``text``, or None when the event builder must read it."""
    if unusual_text(text):
        return None
    try:
        return _Reader(path, js).read(text)
    except Unsupported:
        return None


class _Reader(ValueReader):
    def __init__(self, path: str, js: bool):
        self.path = path
        self.js = js
        self.stack: list[_Frame] = []
        if len(_PLAIN) + len(_KEYS) + len(_FLOWS) + len(_LINES) > _MAX_REMEMBERED:
            _PLAIN.clear(), _KEYS.clear(), _FLOWS.clear(), _LINES.clear()
        self.plain, self.keys, self.flows, self.lines = _PLAIN, _KEYS, _FLOWS, _LINES
        self.line = 0
        self.root: Any = None
        self.block: BlockText | None = None

    def read(self, text: str) -> Any:
        """The tree of ``text``. The loop itself places the common line (``blocklines``, read
        once per distinct text) with locals only: it runs for nearly every line of
        every file, so it avoids calls."""
        stack, path, lines = self.stack, self.path, self.lines
        block = None  # a block scalar whose lines are being read (blocktext)
        for number, s in enumerate(text.split("\n"), 1):
            if block is not None:
                if block.take(s):
                    continue
                block.finish()
                block = self.block = None
            line = lines.get(s)
            if line is None:
                line = lines[s] = common_line(s, self.keys, self.plain, self.flows)
            if line is True:  # a blank or comment line
                continue
            if line is False or not stack:
                self._line(number, s)
                block = self.block
                continue
            column, dash, key, key_column, kind, scalar, at, empty_at = line
            top = stack[-1]
            if top.column > column:
                top = self._close_to(column)
            if dash:  # `- key: ...`: a new mapping as an item
                if not (top.is_map and top.key is not None or top.column == column and not top.is_map):
                    self._line(number, s)
                    block = self.block
                    continue
                self.line = number
                top = self._dash_map(top, column, key_column)
            elif not top.is_map or top.column != column and top.key is None:
                self._line(number, s)
                block = self.block
                continue
            elif top.column != column:  # the first key of a block mapping below a pending key
                self.line = number
                top = self._block_map(top, column)
            elif top.key is not None:
                self._set(top, None, top.empty_loc)
            node = top.node
            if key in node:
                raise Unsupported  # the event builder words the duplicate-key error
            key_loc = Loc(path, number, key_column + 1)
            if kind is OPEN_KEY:  # `key:`: the value is on the lines below, or null
                top.key, top.key_loc = key, key_loc
                top.empty_loc = Loc(path, number, empty_at)
                continue
            loc = Loc(path, number, at + 1)
            if kind is FLOW:
                seq = scalar = new_list(loc)
                seq.extend(line[5][0])
                seq.item_locs = [Loc(path, number, at + 1 + offset) for offset in line[5][1]]
            elif kind is JS:
                if not self.js:
                    raise Unsupported  # the event builder names the unknown tag
                scalar = JsExpr(scalar, loc)
            elif kind is FLOW_MAP:
                scalar = self._flow_map(scalar, number, at)
            node[key] = scalar
            node.key_locs[key] = key_loc
            node.value_locs[key] = loc
        if block is not None:
            block.finish_at_end()
        while stack:
            self._pop()
        if self.root is None:
            raise Unsupported  # an empty stream or a scalar document
        return self.root

    def _flow_map(self, entries: list, number: int, at: int):
        path = self.path
        node = new_map(Loc(path, number, at + 1))
        for key, key_at, value, value_at in entries:
            node[key] = value
            node.key_locs[key] = Loc(path, number, at + key_at + 1)
            node.value_locs[key] = Loc(path, number, at + value_at + 1)
        return node

    def _close_to(self, column: int) -> _Frame:
        """Close every collection deeper than ``column``; the new innermost one."""
        stack = self.stack
        while stack[-1].column > column:
            self._pop()
            if not stack:
                raise Unsupported
        return stack[-1]

    def _block_map(self, top: _Frame, column: int) -> _Frame:
        loc = Loc(self.path, self.line, column + 1)
        node = new_map(loc)
        self._set(top, node, loc)
        return self._push(node, column, True)

    def _dash_map(self, top: _Frame, column: int, at: int) -> _Frame:
        """The mapping a ``- key: ...`` line at ``column`` starts: an item of the sequence ``top``,
        or of a new sequence that is the block value of ``top``'s pending key."""
        if top.is_map:
            loc = Loc(self.path, self.line, column + 1)
            seq = new_list(loc)
            self._set(top, seq, loc)
            top = self._push(seq, column, False, indentless=top.column == column)
        loc = Loc(self.path, self.line, at + 1)
        node = new_map(loc)
        top.node.append(node)
        top.node.item_locs.append(loc)
        return self._push(node, at, True)

    def _line(self, number: int, s: str) -> None:
        """Any line: the general case of ``read``."""
        stack = self.stack
        body = s.lstrip(" ")
        if not body or body[0] == "#":
            return
        self.line = number
        column = len(s) - len(body)
        if not column and body.startswith(("---", "...")):
            raise Unsupported  # a document marker
        if not stack:
            self._start(s, column)
            return
        top = self._close_to(column)
        dash = body[0] == "-" and (len(body) == 1 or body[1] == " ")
        if top.column == column:
            self._same_level(top, s, column, dash)
        elif top.is_map and top.key is not None:  # the block value of a pending key
            self._child(top, s, column, dash)
        else:  # a continuation line, or indentation the subset does not know
            raise Unsupported

    def _start(self, s: str, column: int) -> None:
        if self.root is not None or column:
            raise Unsupported
        loc = Loc(self.path, self.line, 1)
        if s[0] in "[{":  # `[]`, the empty patch list, or a one-line flow sequence
            self.root = self._value(s, 0, loc)
        elif s[0] == "-" and (len(s) == 1 or s[1] == " "):
            frame = self._push(new_list(loc), 0, False)
            self.root = frame.node
            self._item(frame, s, 0)
        else:
            frame = self._push(new_map(loc), 0, True)
            self.root = frame.node
            self._entry(frame, s, 0)

    def _same_level(self, top: _Frame, s: str, column: int, dash: bool) -> None:
        if top.is_map:
            if dash:
                if top.key is None:
                    raise Unsupported
                self._child(top, s, column, dash, indentless=True)
                return
            self._finish_empty(top)
            self._entry(top, s, column)
        elif dash:
            self._item(top, s, column)
        elif top.indentless:
            self._pop()
            parent = self.stack[-1]
            if parent.column != column:
                raise Unsupported
            self._entry(parent, s, column)
        else:
            raise Unsupported

    def _child(self, top: _Frame, s: str, column: int, dash: bool, indentless: bool = False) -> None:
        loc = Loc(self.path, self.line, column + 1)
        node = new_list(loc) if dash else new_map(loc)
        self._set(top, node, loc)
        frame = self._push(node, column, not dash, indentless)
        if dash:
            self._item(frame, s, column)
        else:
            self._entry(frame, s, column)

    def _push(self, node, column: int, is_map: bool, indentless: bool = False) -> _Frame:
        if len(self.stack) >= _MAX_STACK:
            raise Unsupported
        frame = _Frame(node, column, is_map, indentless)
        self.stack.append(frame)
        return frame

    def _pop(self) -> None:
        frame = self.stack.pop()
        if frame.is_map and frame.key is not None:
            self._set(frame, None, frame.empty_loc)

    def _finish_empty(self, frame: _Frame) -> None:
        """A pending key without a block value below it: its value is null, placed after the ':'."""
        if frame.key is not None:
            self._set(frame, None, frame.empty_loc)

    @staticmethod
    def _set(frame: _Frame, value: Any, loc: Loc) -> None:
        node, key = frame.node, frame.key
        node[key] = value
        node.key_locs[key] = frame.key_loc
        node.value_locs[key] = loc
        frame.key = None

    def _item(self, frame: _Frame, s: str, column: int) -> None:
        """``- ...`` at ``column``: a scalar, a nested ``- `` or the first entry of a mapping."""
        n = len(s)
        j = column + 1
        while j < n and s[j] == " ":
            j += 1
        if j == n or s[j] == "#":
            raise Unsupported  # `- ` alone: js-yaml may read the lines below into it
        seq = frame.node
        loc = Loc(self.path, self.line, j + 1)
        if s[j] == "-" and (j + 1 == n or s[j + 1] == " "):
            child = self._push(new_list(loc), j, False)
            seq.append(child.node)
            seq.item_locs.append(loc)
            self._item(child, s, j)
            return
        if looks_like_entry(s, j):
            child = self._push(new_map(loc), j, True)
            seq.append(child.node)
            seq.item_locs.append(loc)
            self._entry(child, s, j)
            return
        value = self._value(s, j, loc)
        seq.append(value)
        seq.item_locs.append(loc)
        if value is PENDING:
            self.block.place(seq, len(seq) - 1, frame.column)

    def _entry(self, frame: _Frame, s: str, j: int) -> None:
        """``key: value`` or ``key:`` at column ``j`` into the mapping of ``frame``."""
        key_loc = Loc(self.path, self.line, j + 1)
        key, colon = self._key(s, j)
        node = frame.node
        if key in node or colon - j > MAX_KEY:
            raise Unsupported  # the event builder words the duplicate-key error
        n = len(s)
        v = colon + 1
        while v < n and s[v] == " ":
            v += 1
        if v == n or s[v] == "#":
            if v < n and v == colon + 1:
                raise Unsupported  # `key:#` is not a comment
            frame.key, frame.key_loc = key, key_loc
            frame.empty_loc = Loc(self.path, self.line, colon + 2)
            return
        if v == colon + 1:
            raise Unsupported
        loc = Loc(self.path, self.line, v + 1)
        value = node[key] = self._value(s, v, loc)
        node.key_locs[key] = key_loc
        node.value_locs[key] = loc
        if value is PENDING:
            self.block.place(node, key, frame.column)

    def _key(self, s: str, j: int) -> tuple[str, int]:
        """The key at ``j`` (as JavaScript sees it) and the index of its ':'."""
        first = s[j]
        if first == "'" or first == '"':
            text, end = quoted_scalar(s, j)
            if s[end:end + 1] != ":":
                raise Unsupported
            return text, end
        if first in INDICATOR_FIRST or (first in SPACE_FOLLOWED_FIRST and s[j + 1:j + 2] in ("", " ")):
            raise Unsupported
        colon = s.find(": ", j)
        if colon == -1:
            if not s.endswith(":"):
                raise Unsupported
            colon = len(s) - 1
        raw = s[j:colon].rstrip(" ")
        if " #" in raw or not raw or colon - j > MAX_KEY:
            raise Unsupported  # (a key this long is never remembered: read() checks only new keys)
        key = self.keys.get(raw)
        if key is None:
            key = self.keys[raw] = js_key(resolve_plain(raw), None)
        return key, colon

