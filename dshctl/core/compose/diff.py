"""A semantic diff of two compositions, keyed by row id (nesting included).

Each row with a string id is compared by: presence (added/removed), place (its group and its order
among the rows both sides share: moved), effective state (enabled/disabled, counting disabled group
ancestors), ``config`` (with a field-level diff) and every other key. Rows without an id cannot be
matched and are only counted.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from dshctl.core.yaml import jsvalue
from dshctl.core.compose.composition import iter_rows
from dshctl.core.yaml.nodes import JsExpr, js_truthy, to_plain

_SKIP = ("id", "config", "disabled")


@dataclass
class RowInfo:
    row: dict
    parent: str | None
    order: int
    state: str  # enabled | disabled | conditional


@dataclass
class FieldChange:
    path: str
    change: str  # added | removed | changed
    old: Any = None
    new: Any = None

    def to_dict(self) -> dict:
        return {"path": self.path, "change": self.change, "old": to_plain(self.old),
                "new": to_plain(self.new)}


@dataclass
class RowChange:
    row_id: str
    kinds: list[str]
    fields: list[FieldChange] = field(default_factory=list)
    detail: str = ""

    def to_dict(self) -> dict:
        return {"id": self.row_id, "changes": self.kinds, "detail": self.detail,
                "fields": [f.to_dict() for f in self.fields]}


@dataclass
class DiffResult:
    changes: list[RowChange]
    unkeyed: tuple[int, int]  # id-less rows on each side

    def to_dict(self) -> dict:
        return {"changes": [c.to_dict() for c in self.changes],
                "unkeyed": {"a": self.unkeyed[0], "b": self.unkeyed[1]}}


def _state(row: dict, parents: tuple) -> str:
    for holder in (*parents, row):
        flag = holder.get("disabled")
        if isinstance(flag, JsExpr):
            return "conditional"
        if js_truthy(flag) and not (holder is row and js_truthy(row.get("group"))):
            return "disabled"
    return "enabled"


def index_rows(rows: list) -> tuple[dict[str, RowInfo], int]:
    out: dict[str, RowInfo] = {}
    unkeyed = 0
    counters: dict[str | None, int] = {}
    for row, parents in iter_rows(rows):
        row_id = row.get("id")
        if not isinstance(row_id, str) or not row_id:
            unkeyed += 1
            continue
        parent = parents[-1].get("id") if parents else None
        parent = parent if isinstance(parent, str) else None
        order = counters.get(parent, 0)
        counters[parent] = order + 1
        out[row_id] = RowInfo(row, parent, order, _state(row, parents))
    return out, unkeyed


def field_diff(old: Any, new: Any, path: str = "") -> list[FieldChange]:
    """Leaf-level differences between two values (mappings recurse, everything else compares whole)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[FieldChange] = []
        for key in old:
            sub = f"{path}.{key}" if path else key
            if key not in new:
                out.append(FieldChange(sub, "removed", old[key], None))
            else:
                out.extend(field_diff(old[key], new[key], sub))
        for key in new:
            if key not in old:
                out.append(FieldChange(f"{path}.{key}" if path else key, "added", None, new[key]))
        return out
    if jsvalue.to_json(old) == jsvalue.to_json(new) and type(old) is type(new):
        return []
    return [FieldChange(path or "(whole)", "changed", old, new)]


def diff_rows(a_rows: list, b_rows: list) -> DiffResult:
    a, a_unkeyed = index_rows(a_rows)
    b, b_unkeyed = index_rows(b_rows)
    changes: list[RowChange] = []
    moved = _moved_ids(a, b)
    for row_id, info in a.items():
        if row_id not in b:
            changes.append(RowChange(row_id, ["removed"], detail=_where(info)))
    for row_id, new in b.items():
        old = a.get(row_id)
        if old is None:
            changes.append(RowChange(row_id, ["added"], detail=_where(new)))
            continue
        change = _compare(row_id, old, new, row_id in moved)
        if change.kinds:
            changes.append(change)
    return DiffResult(changes, (a_unkeyed, b_unkeyed))


def _where(info: RowInfo) -> str:
    return f"in group {info.parent}" if info.parent else "at the top level"


def _moved_ids(a: dict[str, RowInfo], b: dict[str, RowInfo]) -> set[str]:
    """Rows that stayed in their group but changed order: those outside the longest common
    subsequence of the group's shared rows (so one moved row does not flag all its neighbours)."""
    common = [k for k in b if k in a and a[k].parent == b[k].parent]
    moved: set[str] = set()
    groups: dict[str | None, list[str]] = {}
    for k in common:
        groups.setdefault(b[k].parent, []).append(k)
    for ids in groups.values():
        old_seq = sorted(ids, key=lambda k: a[k].order)
        new_seq = sorted(ids, key=lambda k: b[k].order)
        matcher = difflib.SequenceMatcher(a=old_seq, b=new_seq, autojunk=False)
        kept = {old_seq[blk.a + i] for blk in matcher.get_matching_blocks() for i in range(blk.size)}
        moved.update(k for k in ids if k not in kept)
    return moved


def _compare(row_id: str, old: RowInfo, new: RowInfo, reordered: bool) -> RowChange:
    change = RowChange(row_id, [])
    if old.parent != new.parent:
        change.kinds.append("moved")
        change.detail = f"from {_where(old)} to {_where(new)}"
    elif reordered:
        change.kinds.append("moved")
        change.detail = f"position {old.order + 1} -> {new.order + 1} {_where(new)}"
    if old.state != new.state:
        change.kinds.append({"enabled": "enabled", "disabled": "disabled"}.get(new.state, "conditional"))
    old_cfg, new_cfg = old.row.get("config", None), new.row.get("config", None)
    if not (js_truthy(new.row.get("group")) and isinstance(new_cfg, list)):
        fields = field_diff(old_cfg, new_cfg)
        if fields:
            change.kinds.append("config changed")
            change.fields = [FieldChange("config." + f.path if f.path != "(whole)" else "config",
                                         f.change, f.old, f.new) for f in fields]
    others = {k for k in (*old.row, *new.row) if k not in _SKIP}
    for key in sorted(others):
        o, n = old.row.get(key, None), new.row.get(key, None)
        if (key in old.row) != (key in new.row) or jsvalue.to_json(o) != jsvalue.to_json(n):
            change.kinds.append(f"{key} changed")
            change.fields.append(FieldChange(key, "changed", o, n))
    return change
