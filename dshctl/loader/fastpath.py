"""The incremental path of a tree update: work proportional to the change, not to the tree.

A reload usually hands the loader a fresh list that differs from the committed one in a few
top-level rows. When the new list has the same ids in the same order and only plain (non-group)
rows differ, the changed rows are planned and reconciled alone; every other row is found equal by
one C-level pass (``map(operator.ne, …)``) and only adopts its new row object (so locations stay
current). Anything else (rows added, removed, moved or renumbered; a changed group; a row without
an id) takes the full path, whose semantics are the reference: this path must give the same result.

Rows that must be looked at on every update even when equal (a ``disabled: !!js`` flag anywhere in
the row's subtree, or a skipped plugin that may have been installed since) are always treated as
changed; a group among them sends the update to the full path.
"""
from __future__ import annotations

import operator
from itertools import compress
from typing import TYPE_CHECKING, Any

from dshctl.core.nodes import JsExpr

from .entry import Entry, is_group_row
from .plan import RowPlan

if TYPE_CHECKING:  # pragma: no cover
    from .tree import Tree


def changed_rows(tree: "Tree", rows: Any) -> list[int] | None:
    """Indices of the top-level rows to reconcile, or ``None`` when the full path is needed."""
    old = tree.rows
    if not isinstance(rows, list) or not old or len(rows) != len(old):
        return None
    changed = set(compress(range(len(rows)), map(operator.ne, rows, old)))
    changed |= tree.recheck
    roots = tree.roots
    for index in changed:
        new, entry = rows[index], roots[index]
        if not (isinstance(new, dict) and _is_named(new) and entry.options is old[index]
                and new.get("id") == entry.id and not is_group_row(new) and not entry.is_group):
            return None
    return sorted(changed)


def plans_for(rows: list, indices: list[int]) -> list[RowPlan]:
    return [RowPlan(rows[i]["id"], rows[i], None, False) for i in indices]


def adopt(entries: list[Entry], rows: list) -> None:
    """Equal rows: point each entry at its new row object (and a group's children at theirs)."""
    for entry, row in zip(entries, rows):
        entry.options = row
        if entry.children and entry.is_group:
            adopt(entry.children, row["config"])


def needs_recheck(entry: Entry) -> bool:
    return entry.skipped is not None or isinstance(entry.options.get("disabled"), JsExpr)


def recheck_roots(tree: "Tree") -> set[int]:
    """Top-level positions whose subtree holds a row that :func:`needs_recheck`."""
    position = {id(root): i for i, root in enumerate(tree.roots)}
    out = set()
    for entry in tree.order():
        if needs_recheck(entry):
            while entry.parent is not None:
                entry = entry.parent
            out.add(position[id(entry)])
    return out


def _is_named(row: dict) -> bool:
    name = row.get("name")
    return isinstance(name, str) and bool(name)
