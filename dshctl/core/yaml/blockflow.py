"""One-line flow collections with quoted scalars for ``blockscan``: ``['-y', "@scope/pkg"]`` and
``{node: '>=20', retries: 3}``, as real presets write them.

Items are plain scalars (no ``[]{}#:'"`` inside, no indicator first) or one-line quoted scalars
without escapes; mapping keys are simple plain keys or quoted ones, each followed by ``': '``. No
nesting, no empty item, no trailing comma, no duplicate key: anything else raises ``Unsupported`` and
the event builder reads the file (``tests/test_blockscan.py`` holds the trees equal).
"""
from __future__ import annotations

import re
from typing import Any

from dshctl.core.yaml.blocktokens import FLOW_BAD_FIRST, Unsupported, only_comment_after, quoted_scalar
from dshctl.core.yaml.scalars import js_key, resolve_plain

_PLAIN_ITEM = re.compile(r"""[^\[\]{}#:'",]*""")
_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*")


def _skip(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] == " ":
        i += 1
    return i


def _item(s: str, i: int, plain: dict) -> tuple[Any, int]:
    """The scalar at ``i`` (spaces skipped already) and the index just past it."""
    first = s[i:i + 1]
    if first == "'" or first == '"':
        return quoted_scalar(s, i)
    end = _PLAIN_ITEM.match(s, i).end()
    text = s[i:end].rstrip(" ")
    if not text or text[0] in FLOW_BAD_FIRST:
        raise Unsupported
    value = plain.get(text, _MISSING)
    if value is _MISSING:
        value = plain[text] = resolve_plain(text)
    return value, i + len(text)


def _after(s: str, i: int, closer: str) -> tuple[bool, int]:
    """After an item: (closed, the index of the next item or just past the closer)."""
    i = _skip(s, i)
    c = s[i:i + 1]
    if c == closer:
        return True, i + 1
    if c != ",":
        raise Unsupported
    i = _skip(s, i + 1)
    if s[i:i + 1] in ("", "]", "}", ","):
        raise Unsupported  # a trailing comma, an empty item or the line ends
    return False, i


def flow_sequence(s: str, v: int, plain: dict) -> tuple[list, list[int]]:
    """``[a, 'b', "c"]`` at ``s[v]``: its items and the column (from 0) of each."""
    values: list = []
    columns: list[int] = []
    i = _skip(s, v + 1)
    if s[i:i + 1] == "]":
        only_comment_after(s, i + 1)
        return values, columns
    while True:
        columns.append(i)
        value, i = _item(s, i, plain)
        values.append(value)
        closed, i = _after(s, i, "]")
        if closed:
            only_comment_after(s, i)
            return values, columns


def flow_mapping(s: str, v: int, plain: dict, keys: dict) -> list[tuple[str, int, Any, int]]:
    """``{k: v, 'q': "w"}`` at ``s[v]``: (key, key column, value, value column) per entry."""
    entries: list[tuple[str, int, Any, int]] = []
    seen: set[str] = set()
    i = _skip(s, v + 1)
    while True:
        key_at = i
        if s[i:i + 1] in ("'", '"'):
            key, i = quoted_scalar(s, i)
        else:
            m = _KEY.match(s, i)
            if m is None:
                raise Unsupported
            raw, i = m.group(), m.end()
            key = keys.get(raw)
            if key is None:
                key = keys[raw] = js_key(resolve_plain(raw), None)
        if s[i:i + 2] != ": " or key in seen:
            raise Unsupported  # `k:v`, `k :`, `{k}`, a duplicate: the event builder's
        seen.add(key)
        i = _skip(s, i + 2)
        value_at = i
        value, i = _item(s, i, plain)
        entries.append((key, key_at, value, value_at))
        closed, i = _after(s, i, "}")
        if closed:
            only_comment_after(s, i)
            return entries


_MISSING = object()
