"""The incremental path of a tree update: work proportional to the change, not to the tree.

A reload usually hands the loader a fresh list that differs from the committed one in a few
top-level rows: one edited, added or removed. When only plain (non-group) top-level rows were
edited, added or removed, and the others kept their relative order, just those rows are planned
and reconciled; every other row is found equal by one C-level pass (``map(operator.ne, …)``) and
only adopts its new row object (so locations stay current). Anything else (rows moved, a changed,
added or removed group, a row without an id, ids that would clash) takes the full path, whose
semantics are the reference: this path must give the same result (tests/loader/test_incremental.py).

Rows that must be looked at on every update even when equal (a ``disabled: !!js`` flag anywhere in
the row's subtree, or a skipped plugin that may have been installed since) are always planned; a
group among them sends the update to the full path.
"""
from __future__ import annotations

import operator
from collections import deque
from dataclasses import dataclass, field
from itertools import compress, islice, repeat
from typing import TYPE_CHECKING, Any

from dshctl.core.yaml.nodes import JsExpr

from .entry import Entry, is_group_row
from .plan import RowPlan

if TYPE_CHECKING:  # pragma: no cover
    from .tree import Tree


@dataclass
class Delta:
    plan: list[int]                                       # positions in the new list to reconcile
    removed: list[Entry] = field(default_factory=list)    # top-level plain rows no longer listed
    ids: list[str] | None = None                          # the new top-level ids when rows came or went


def delta(tree: "Tree", rows: Any) -> Delta | None:
    """What to reconcile, or ``None`` when the full path is needed."""
    old = tree.rows
    if not isinstance(rows, list) or not old:
        return None
    if len(rows) == len(old):
        changed = set(compress(range(len(rows)), map(operator.ne, rows, old)))
        changed.update(tree.root_pos[i] for i in tree.recheck)
        roots = tree.roots
        if all(_plain(rows[i]) and rows[i]["id"] == roots[i].id and _replaceable(roots[i], old[i])
               for i in changed):
            return Delta(sorted(changed))
    return _rows_came_or_went(tree, rows)


def _rows_came_or_went(tree: "Tree", rows: list) -> Delta | None:
    # the passes over every row run in C (map, compress, set operations): only rows that came,
    # went or differ are handled in Python
    try:
        ids = [row["id"] for row in rows]
        listed_ids = set(ids)
        if len(listed_ids) != len(ids):
            return None                 # duplicates: the full path reports them
    except (KeyError, TypeError, IndexError):
        return None                     # a row without an id, or an id that is not a string
    olds = list(map(tree.root_pos.get, ids))              # None: a row that came
    listed = list(map(operator.is_not, olds, repeat(None)))
    kept_new = list(compress(range(len(ids)), listed))
    kept_old = list(compress(olds, listed))
    if any(map(operator.ge, kept_old, islice(kept_old, 1, None))):
        return None                     # rows were reordered
    came = list(compress(range(len(ids)), map(operator.not_, listed)))
    if any(ids[n] in tree.store for n in came):
        return None                     # a row moved out of a group (or clashes with one inside)
    old = tree.rows
    plan = set(compress(kept_new, map(operator.ne, map(rows.__getitem__, kept_new),
                                      map(old.__getitem__, kept_old))))
    plan.update(came)
    plan.update(ids.index(i) for i in tree.recheck if i in listed_ids)
    removed = [tree.roots[o] for o in sorted(set(range(len(old))) - set(kept_old))]
    if any(entry.is_group for entry in removed):
        return None
    for n in plan:
        entry = tree.store.get(ids[n])
        if not _plain(rows[n]) or (entry is not None and not _replaceable(entry, old[olds[n]])):
            return None
    return Delta(sorted(plan), removed, ids)


def _plain(row: Any) -> bool:
    """A well-formed row with an id that holds no rows (anything else: the full path checks it)."""
    if not isinstance(row, dict):
        return False
    name, entry_id = row.get("name"), row.get("id")
    return (isinstance(name, str) and bool(name) and isinstance(entry_id, str) and bool(entry_id)
            and ":" not in entry_id and not is_group_row(row))


def _replaceable(entry: Entry, committed: Any) -> bool:
    return entry.options is committed and not entry.is_group and entry.parent is None


def plans_for(rows: list, positions: list[int]) -> list[RowPlan]:
    return [RowPlan(rows[i]["id"], rows[i], None, False) for i in positions]


def adopt(tree: "Tree", rows: list) -> None:
    """Equal rows: point each entry at its new row object (and a group's children at theirs)."""
    _adopt(tree.roots, rows, flat=len(tree.order_view()) == len(tree.roots))


def _adopt(entries: list[Entry], rows: list, *, flat: bool = False) -> None:
    deque(map(setattr, entries, repeat("options"), rows), maxlen=0)   # one C-level pass
    if flat:
        return
    for entry, row in zip(entries, rows):
        if entry.children and entry.is_group:
            _adopt(entry.children, row["config"])


def relink(tree: "Tree", ids: list[str]) -> None:
    """Rows came or went at the top level: the new roots, and the pre-order with group subtrees."""
    roots = list(map(tree.store.__getitem__, ids))
    if len(tree.order_view()) == len(tree.roots):
        order = list(roots)             # no group rows: the pre-order is the roots
    else:
        below: dict[Entry, list[Entry]] = {}
        top = None
        for entry in tree.order_view():
            if entry.parent is None:
                top = entry
            else:
                below.setdefault(top, []).append(entry)
        order = []
        for root in roots:
            order.append(root)
            order.extend(below.get(root, ()))
    tree.set_layout(roots, order)


def needs_recheck(entry: Entry) -> bool:
    return entry.skipped is not None or isinstance(entry.options.get("disabled"), JsExpr)


def recheck_roots(tree: "Tree") -> set[str]:
    """Ids of the top-level rows whose subtree holds a row that :func:`needs_recheck`."""
    out = set()
    for entry in tree.order_view():
        if needs_recheck(entry):
            while entry.parent is not None:
                entry = entry.parent
            out.add(entry.id)
    return out
