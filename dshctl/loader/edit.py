"""The programmatic tree API (cordis-runtime.md §6.4): create, remove and update/move one row.

Each edit builds the tree's next row list from what runs now and applies it through the normal
transactional update, so a failed edit (a move into a group where the row fails, say) leaves the
row at its old parent and position. Each successful edit writes the tree back (an include's file).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .entry import is_group_row
from .errors import LoaderError
from .report import UpdateReport

if TYPE_CHECKING:  # pragma: no cover
    from .entry import Entry
    from .tree import Tree


def _layout(tree: "Tree") -> dict[str | None, list]:
    """parent id (None: the top level) -> its rows in order; an item is an Entry or a raw row."""
    layout: dict[str | None, list] = {None: list(tree.roots)}
    for entry in tree.order():
        if is_group_row(entry.options):
            layout[entry.id] = list(entry.children)
    return layout


def _rows(layout: dict, key: str | None, replaced: dict[str, dict]) -> list:
    out = []
    for item in layout.get(key, []):
        if not hasattr(item, "options"):
            out.append(item)           # a new raw row: its own group config travels with it
            continue
        row = replaced.get(item.id, item.options)
        if item.id in layout and is_group_row(row):
            row = _with_config(row, _rows(layout, item.id, replaced))
        out.append(row)
    return out


def _with_config(row: dict, config: list) -> dict:
    """A copy of ``row`` with new children, keeping its source positions (``./`` names resolve
    beside the file that declared it)."""
    copy = row.__class__(row) if hasattr(row, "loc") else dict(row)
    for attr in ("loc", "key_locs", "value_locs"):
        if hasattr(row, attr):
            setattr(copy, attr, getattr(row, attr))
    copy["config"] = config
    return copy


def _place(layout: dict, item: Any, parent_id: str | None, position: int | None) -> None:
    if parent_id not in layout:
        raise LoaderError(f"loader entry {parent_id} is not a group", hint="move rows into `group: true` rows only")
    target = layout[parent_id]
    target.insert(len(target) if position is None else max(0, min(position, len(target))), item)


def _unplace(layout: dict, entry_id: str) -> tuple[str | None, int]:
    for key, items in layout.items():
        for index, item in enumerate(items):
            if getattr(item, "id", None) == entry_id:
                del items[index]
                return key, index
    raise LoaderError(f"loader entry {entry_id} not found")


async def create(tree: "Tree", options: dict, parent_id: str | None = None,
                 position: int | None = None) -> UpdateReport:
    layout = _layout(tree)
    _place(layout, options, parent_id, position)
    return await _apply(tree, _rows(layout, None, {}))


async def remove(tree: "Tree", entry_id: str) -> UpdateReport:
    layout = _layout(tree)
    _unplace(layout, entry_id)
    return await _apply(tree, _rows(layout, None, {}))


async def update(tree: "Tree", entry_id: str, options: dict | None = None, *,
                 parent_id: Any = ..., position: int | None = None) -> UpdateReport:
    """Replace a row's options and/or move it (``parent_id=None`` is the top level)."""
    entry = tree.store.get(entry_id)
    if entry is None:
        raise LoaderError(f"loader entry {entry_id} not found")
    layout = _layout(tree)
    if parent_id is not ...:
        _unplace(layout, entry_id)
        _place(layout, entry, parent_id, position)
    replaced = {}
    if options is not None:
        merged = _with_config(entry.options, entry.options.get("config"))
        merged.update(options)
        for key in [k for k, v in merged.items() if v is None]:
            del merged[key]  # updating a key to null deletes it
        merged["id"] = entry_id
        if "config" not in entry.options and "config" not in options:
            merged.pop("config", None)
        replaced[entry_id] = merged
    return await _apply(tree, _rows(layout, None, replaced))


async def _apply(tree: "Tree", rows: list) -> UpdateReport:
    report = await tree.update(rows)
    tree.schedule_write()
    return report
