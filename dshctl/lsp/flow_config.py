"""The key under the cursor in a row's config written inline (``config: {port: 9090, tls: {on: true}}``).

The line-based cursor (cursor.py) follows block style only; inline config is found in the parsed
document instead, by the positions the dialect's reader records for every key. A document that does
not parse (mid-edit) gives no answer, as a block key on a broken line gives none.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from dshctl.core.yaml.dialect import load_yaml
from dshctl.lsp.cursor import ITEM
from dshctl.errors import DshctlError


@lru_cache(maxsize=4)  # hover asks twice for one position (the plugin's words, then the row's)
def flow_key_at(text: str, path: Path, line: int, column: int) -> tuple[int, tuple[str, ...], str] | None:
    """For a cursor (0-based) on a key inside a row's inline ``config``: the 0-based line of the row,
    the keys from ``config`` down to the mapping holding the key, and the key. None elsewhere."""
    if "{" not in text:
        return None
    try:
        value = load_yaml(text, path).value
    except (DshctlError, RecursionError, ValueError):
        return None
    lines = text.split("\n")
    for row in _rows(value):
        found = _key_in(row["config"], line + 1, column + 1, [])
        if found is not None:
            item = _item_line(lines, row)
            return (item, tuple(found[0]), found[1]) if item is not None else None
    return None


def _rows(value):
    """Every mapping with a mapping ``config`` and an ``id`` or ``name`` (a row, wherever it sits)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("config"), dict) and ("id" in node or "name" in node):
                yield node
            stack.extend(v for k, v in node.items() if k != "config")
        elif isinstance(node, list):
            stack.extend(node)


def _key_in(mapping: dict, line: int, column: int, above: list[str]) -> tuple[list[str], str] | None:
    for key, loc in (getattr(mapping, "key_locs", None) or {}).items():
        if loc is not None and loc.line == line and loc.column <= column < loc.column + _width(key):
            return above, key
    for key, value in mapping.items():
        if isinstance(value, dict):
            found = _key_in(value, line, column, [*above, str(key)])
            if found is not None:
                return found
    return None


def _width(key) -> int:
    return len(str(key)) + 2  # room for quotes around it; the next character is ':' or a space


def _item_line(lines: list[str], row) -> int | None:
    """The line of the row's ``-`` (its mapping may start on the next line: ``-`` alone, then keys)."""
    loc = getattr(row, "loc", None)
    if loc is None:
        return None
    for i in range(min(loc.line - 1, len(lines) - 1), -1, -1):
        if ITEM.match(lines[i]):
            return i
    return None
