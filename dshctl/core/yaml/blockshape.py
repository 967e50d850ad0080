"""The fast reader without positions, for a scan that only checks a tree's shape.

``preset list`` needs of each ``agent.cordis.yml`` only whether it loads and the shape of its rows
(``core/presets/health.py``); positions matter only for a finding, and the caller then reads the text
again on the full path for them. This reader accepts exactly the texts ``blockscan`` accepts and
builds the same values, but its common-line loop creates no ``Loc`` and stores no per-key or
per-item positions, mappings it opens there are plain ``dict``s, and it reads block-scalar headers
itself (about half the fast reader's cost on real-style presets; docs/performance.md). Lines the
loop leaves to the general path still go through ``blockscan``'s code (position-tracked nodes: the
same values). ``tests/test_blockshape.py`` holds the two equal.
"""
from __future__ import annotations

import re
from typing import Any

from dshctl.core.yaml.blocklines import FLOW, FLOW_MAP, JS, MAX_KEY, OPEN_KEY, common_line
from dshctl.core.yaml.blockscan import _MAX_REMEMBERED, _Frame, _Reader
from dshctl.core.yaml.blocktext import PENDING, BlockText, open_block
from dshctl.core.yaml.blocktokens import Unsupported, unusual_text
from dshctl.core.yaml.nodes import JsExpr
from dshctl.core.yaml.scalars import js_key, resolve_plain

# `key: |`, `key: >-`, `key: !!js >-`...: a block scalar's header, the line `common_line` leaves to
# the general path that every prompt starts with. Groups: indentation, key, the tag, the indicator.
_HEADER = re.compile(r"( *)([A-Za-z0-9_][A-Za-z0-9_./-]*): +(!!js +)?([|>].*)\Z")
_HEADERS: dict[str, tuple | None] = {}  # a line's text -> block_header's answer
_UNSEEN = object()


def block_header(s: str, keys: dict) -> tuple | None:
    """(indentation, key, js, folded, strip) of a block-scalar header line in the subset, else None
    (the general path reads the line, and refuses it if it must)."""
    m = _HEADER.match(s)
    if m is None or len(m.group(2)) > MAX_KEY:
        return None
    try:
        folded, strip = open_block(s, m.start(4))
    except Unsupported:
        return None
    raw = m.group(2)
    key = keys.get(raw)
    if key is None:
        key = keys[raw] = js_key(resolve_plain(raw), None)
    return len(m.group(1)), key, m.group(3) is not None, folded, strip


def scan_values(text: str, path: str, js: bool = True) -> Any:
    """``blockscan.scan``'s value tree of ``text`` (positions only where the general path read a
    line), or None when the event builder must read it."""
    if unusual_text(text):
        return None
    try:
        return _ShapeReader(path, js).read(text)
    except Unsupported:
        return None


class _Sink:
    """Takes the positions the general path's code writes into a node, and keeps none."""

    __slots__ = ()

    def __setitem__(self, key, value) -> None:
        pass

    def append(self, value) -> None:
        pass


_SINK = _Sink()


class _BareMap(dict):
    """A mapping the loop opened: the general path may add entries (and positions, dropped) to it."""

    __slots__ = ()
    key_locs = value_locs = _SINK


class _BareList(list):
    __slots__ = ()
    item_locs = _SINK


class _ShapeReader(_Reader):
    def read(self, text: str) -> Any:
        """``_Reader.read`` without positions: keep the two loops alike line for line."""
        stack, lines = self.stack, self.lines
        block = None
        for number, s in enumerate(text.split("\n"), 1):
            if block is not None:
                if block.take(s):
                    continue
                block.finish()
                block = self.block = None
            line = lines.get(s)
            if line is None:
                line = lines[s] = common_line(s, self.keys, self.plain, self.flows)
            if line is True:
                continue
            if line is False and stack:
                block = self._header(s)
                if block is not None:
                    continue
            if line is False or not stack:
                self._line(number, s)
                block = self.block
                continue
            column, dash, key, key_column, kind, scalar, at, empty_at = line
            top = stack[-1]
            if top.column > column:
                top = self._close_to(column)
            if dash:
                if not (top.is_map and top.key is not None or top.column == column and not top.is_map):
                    self._line(number, s)
                    block = self.block
                    continue
                top = self._plain_dash_map(top, column, key_column)
            elif not top.is_map or top.column != column and top.key is None:
                self._line(number, s)
                block = self.block
                continue
            elif top.column != column:
                top = self._plain_block_map(top, column)
            elif top.key is not None:
                top.node[top.key] = None
                top.key = None
            node = top.node
            if key in node:
                raise Unsupported
            if kind is OPEN_KEY:
                top.key = key
                continue
            if kind is FLOW:
                scalar = list(scalar[0])
            elif kind is JS:
                if not self.js:
                    raise Unsupported
                scalar = JsExpr(scalar)
            elif kind is FLOW_MAP:
                scalar = {key: value for key, _, value, _ in scalar}
            node[key] = scalar
        if block is not None:
            block.finish_at_end()
        while stack:
            self._pop()
        if self.root is None:
            raise Unsupported
        return self.root

    def _header(self, s: str) -> BlockText | None:
        """A block scalar's header as the next key of the innermost mapping (or the first of a new
        one below a pending key): its lines follow. None
        for any other line (the general path reads it: the same value, or the same refusal)."""
        header = _HEADERS.get(s, _UNSEEN)
        if header is _UNSEEN:
            if len(_HEADERS) > _MAX_REMEMBERED:
                _HEADERS.clear()
            header = _HEADERS[s] = block_header(s, self.keys)
        if header is None:
            return None
        column, key, js, folded, strip = header
        top = self.stack[-1]
        if top.column > column:
            top = self._close_to(column)
        if not top.is_map or js and not self.js:
            return None
        if top.column != column:  # the first key of a block mapping below a pending key
            if top.key is None:
                return None
            top = self._plain_block_map(top, column)
        elif top.key is not None:
            top.node[top.key] = None
            top.key = None
        node = top.node
        if key in node:
            raise Unsupported
        block = self.block = BlockText(None, js, folded, strip)
        node[key] = PENDING
        block.place(node, key, column)
        return block

    def _plain_block_map(self, top: _Frame, column: int) -> _Frame:
        node = _BareMap()
        top.node[top.key] = node
        top.key = None
        return self._plain_push(node, column, True)

    def _plain_dash_map(self, top: _Frame, column: int, at: int) -> _Frame:
        if top.is_map:
            seq = _BareList()
            top.node[top.key] = seq
            top.key = None
            top = self._plain_push(seq, column, False, top.column == column)
        node = _BareMap()
        top.node.append(node)
        return self._plain_push(node, at, True)

    def _plain_push(self, node, column: int, is_map: bool, indentless: bool = False) -> _Frame:
        stack = self.stack
        if len(stack) >= 90:  # blockscan._MAX_STACK
            raise Unsupported
        frame = _Frame(node, column, is_map, indentless)
        stack.append(frame)
        return frame

    def _pop(self) -> None:
        frame = self.stack.pop()
        if frame.is_map and frame.key is not None:
            frame.node[frame.key] = None
            frame.key = None
