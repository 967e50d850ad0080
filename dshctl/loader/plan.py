"""Checks an entry list before anything changes: row shape, ids (generated, unique, no ``:``),
and the rows flattened in pre-order with their group parent (cordis-runtime.md §6.3 step 1)."""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Iterable

from dshctl.errors import Loc

from .entry import is_group_row
from .errors import LoaderError, duplicate_id


@dataclass
class RowPlan:
    id: str
    row: dict
    parent: "RowPlan | None"     # the group row's plan (children are linked before ids are drawn)
    is_group: bool
    plugin: Any = None
    skipped: str | None = None
    own_disabled: bool = False
    disabled: bool = False       # its own flag (not a group's) or an ancestor's unmounts it
    hides_children: bool = False
    active: bool = True


def _loc(row: Any, key: str | None = None) -> Loc | None:
    if key is not None and hasattr(row, "loc_of"):
        return row.loc_of(key)
    return getattr(row, "loc", None)


def new_id(taken: set[str]) -> str:
    while True:
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate


def flatten(rows: Any, existing: Iterable[str], where: Loc | None = None) -> list[RowPlan]:
    """Every row (groups' children included) in pre-order; ids assigned into rows missing one."""
    if not isinstance(rows, list):
        raise LoaderError("an entry list must be a list of rows", loc=where,
                          hint="write the rows as a YAML list (`- id: …`)")
    plans: list[RowPlan] = []
    seen: set[str] = set()
    missing: list[dict] = []
    _walk(rows, None, plans, seen, missing)
    taken = seen | set(existing)
    for row in missing:  # ids are drawn only once every explicit id is known
        row["id"] = new_id(taken)
        taken.add(row["id"])
    for plan in plans:
        plan.id = plan.row["id"]
    return plans


def _walk(rows: list, parent: RowPlan | None, plans: list, seen: set, missing: list) -> None:
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str) or not row["name"]:
            loc = rows.loc_of(index) if hasattr(rows, "loc_of") else None
            raise LoaderError(f'row {index + 1} is not a plugin row (expected a map with a "name")',
                              loc=loc, hint='every row needs `name:` naming its plugin')
        entry_id = row.get("id")
        if entry_id is None or entry_id == "":
            missing.append(row)
        elif not isinstance(entry_id, str):
            raise LoaderError(f"loader entry id must be a non-empty string, got {entry_id!r}",
                              loc=_loc(row, "id"), hint="quote the id: `id: \"7\"`")
        elif ":" in entry_id:
            raise LoaderError(f'loader entry id "{entry_id}" contains ":"', loc=_loc(row, "id"),
                              hint='":" separates an include id from a local id; rename the row')
        elif entry_id in seen:
            raise duplicate_id(entry_id, _loc(row, "id"))
        else:
            seen.add(entry_id)
        group = is_group_row(row)
        plan = RowPlan(entry_id if isinstance(entry_id, str) else "", row, parent, group)
        plans.append(plan)
        if group:
            _walk(row["config"], plan, plans, seen, missing)
