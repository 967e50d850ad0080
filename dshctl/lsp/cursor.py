"""What is under the cursor in a YAML buffer: the key, its value, and the row (list item) around it.

Read from the lines, not from a parse: the buffer is often broken while someone types, and the
editor still wants hover and completion. Block style (``- id: x`` / ``  name: y``) and one-line flow
rows (``- {id: x, name: y}``) are understood; that is how dsh files are written.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

ITEM = re.compile(r"^(\s*)-(?:\s+|$)")
_KEY = re.compile(r"^(\s*)(?:-\s+)*([A-Za-z_][\w.-]*|\"[^\"]*\"|'[^']*')\s*:(?:\s+|$)")


@dataclass
class Cursor:
    line: int  # 0-based
    column: int  # 0-based character index
    key: str | None = None  # the key on this line
    key_start: int = 0
    key_end: int = 0
    value: str = ""  # the value text after ``key:`` (comment and quotes removed)
    value_start: int = 0
    raw_value: str = ""  # the value as written (quotes kept, comment removed)
    in_value: bool = False  # the cursor is past the colon
    row_id: str | None = None  # the id of the row (list item) the line belongs to
    row_line: int | None = None  # where that row's ``-`` is
    under_insert: bool = False  # the row sits in a patch entry's ``insert:`` list

    @property
    def on_key(self) -> bool:
        return self.key is not None and self.key_start <= self.column <= self.key_end


def scalar_text(raw: str) -> str:
    """A plain or quoted scalar's text without a trailing comment or the quotes."""
    text = raw.strip()
    if text and text[0] in "\"'":
        end = text.find(text[0], 1)
        return text[1:end] if end > 0 else text[1:]
    return re.split(r"\s#", text, maxsplit=1)[0].strip()


def cursor_at(lines: list[str], line: int, column: int) -> Cursor:
    cur = Cursor(line, column)
    text = lines[line] if line < len(lines) else ""
    m = _KEY.match(text)
    if m:
        cur.key = m.group(2).strip("\"'")
        cur.key_start, cur.key_end = m.start(2), m.end(2)
        cur.value_start = m.end()
        cur.value = scalar_text(text[m.end():])
        cur.raw_value = re.split(r"\s#", " " + text[m.end():], maxsplit=1)[0].strip()
        cur.in_value = column >= m.end() - (1 if text[m.end() - 1:m.end()] == " " else 0)
    item = _enclosing_item(lines, line)
    if item is not None:
        cur.row_line = item
        cur.row_id = _row_id(lines, item)
        cur.under_insert = _under_insert(lines, item)
    return cur


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _blank(text: str) -> bool:
    stripped = text.strip()
    return not stripped or stripped.startswith("#")


def _enclosing_item(lines: list[str], line: int) -> int | None:
    """The line of the ``-`` that starts the list item ``line`` belongs to (the innermost one)."""
    text = lines[line] if line < len(lines) else ""
    m = ITEM.match(text)
    if m:
        return line
    limit = _indent(text) if not _blank(text) else 10**9
    for i in range(line - 1, -1, -1):
        above = lines[i]
        if _blank(above):
            continue
        m = ITEM.match(above)
        if m and len(m.group(1)) < limit:
            return i
        limit = min(limit, _indent(above))
        if limit == 0 and not m:
            return None
    return None


def _row_id(lines: list[str], item: int) -> str | None:
    return row_value(lines, item, "id")


def row_value(lines: list[str], item: int, key: str) -> str | None:
    """The scalar text of ``key`` in the row (list item) whose ``-`` is on line ``item``."""
    text = lines[item]
    key_col = ITEM.match(text).end()
    body = text[key_col:]
    if body.lstrip().startswith("{"):
        m = re.search(r"[{,]\s*" + re.escape(key) + r"\s*:\s*([^,}#]+)", body)
        return scalar_text(m.group(1)) if m else None
    for i in range(item, len(lines)):
        candidate = " " * key_col + body if i == item else lines[i]
        if i > item and not _blank(candidate) and _indent(candidate) < key_col:
            break  # the item ended
        if _indent(candidate) != key_col:
            continue  # blank, or deeper (a value of another key)
        m = re.match(r"^\s*" + re.escape(key) + r"\s*:\s*(.+)$", candidate)
        if m:
            return scalar_text(m.group(1)) or None
    return None


def _under_insert(lines: list[str], item: int) -> bool:
    """Whether the list the item at ``item`` belongs to is the value of an ``insert:`` key."""
    dash = _indent(lines[item])
    for i in range(item - 1, -1, -1):
        above = lines[i]
        if _blank(above) or _indent(above) > dash or (_indent(above) == dash and ITEM.match(above)):
            continue  # a sibling item or its content
        return bool(re.match(r"^\s*(?:-\s+)?insert\s*:\s*(#.*)?$", above))
    return False


def parent_key(lines: list[str], line: int) -> str | None:
    """The key of the mapping ``line`` sits in (the nearest line above with less indentation)."""
    text = lines[line] if line < len(lines) else ""
    indent = _indent(text)
    for i in range(line - 1, -1, -1):
        above = lines[i]
        if _blank(above) or _indent(above) >= indent:
            continue
        m = _KEY.match(above)
        return m.group(2).strip("\"'") if m else None
    return None


def line_indent(lines: list[str], line: int, column: int) -> int:
    """The indentation the line has, or (blank up to the cursor) will have where the cursor is."""
    text = lines[line] if line < len(lines) else ""
    return column if not text[:column].strip() else _indent(text)


def config_path(lines: list[str], line: int, column: int) -> tuple[int, list[str]] | None:
    """When the line sits in a row's ``config:`` mapping (block style): the line of the row's ``-`` and
    the keys from ``config`` down to the mapping the line is in (``[]``: config's own keys). None for
    a row's own keys, a group's rows, a list item or a line outside any row."""
    text = lines[line] if line < len(lines) else ""
    if ITEM.match(text):
        return None
    limit = line_indent(lines, line, column)
    chain: list[tuple[str, int]] = []  # (key, its column), innermost first
    for i in range(line - 1, -1, -1):
        above = lines[i]
        if _blank(above) or _indent(above) >= limit:
            continue
        item = ITEM.match(above)
        if item:
            key_col = item.end()
            m = _KEY.match(above)
            if key_col < limit and m:
                chain.append((m.group(2).strip("\"'"), key_col))
            if not chain or chain[-1] != ("config", key_col):
                return None
            return i, [key for key, _ in reversed(chain[:-1])]
        m = _KEY.match(above)
        if not m:
            return None
        chain.append((m.group(2).strip("\"'"), _indent(above)))
        limit = _indent(above)
    return None


def mapping_keys(lines: list[str], line: int, indent: int) -> set[str]:
    """The keys at column ``indent`` of the block mapping ``line`` belongs to (the line's own included)."""
    keys: set[str] = set()
    for step in (-1, 1):
        i = line if step == 1 else line - 1
        while 0 <= i < len(lines):
            text = lines[i]
            if not _blank(text):
                if _indent(text) < indent or (_indent(text) == indent and ITEM.match(text)):
                    break
                m = _KEY.match(text)
                if m and _indent(text) == indent:
                    keys.add(m.group(2).strip("\"'"))
            i += step
    return keys
