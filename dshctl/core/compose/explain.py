"""``profile explain ROW-ID[.config.path]``: every layer that touched a row or field, and the winner."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dshctl.core.compose.composition import Composition, iter_rows
from dshctl.core.compose.dump import all_ids, suggest
from dshctl.core.yaml.nodes import JsExpr, YList, YMap, js_truthy
from dshctl.errors import DshctlError, Loc

MISSING = object()  # the field does not exist at that step


@dataclass
class Step:
    layer: str
    action: str  # inserted | set | replaced-parent | inserted-children | skipped
    value: Any
    loc: Loc | None
    message: str = ""


@dataclass
class Explanation:
    row_id: str
    path: list[str]
    steps: list[Step]
    final: Any
    in_tree: bool
    disabled_by: str | None = None
    disabled_loc: Loc | None = None
    warnings: list[dict] = field(default_factory=list)


def split_target(comp: Composition, target: str) -> tuple[str, list[str]]:
    """``row.config.a`` -> (``row``, ``["config", "a"]``); the longest id prefix that exists wins."""
    ids = set(all_ids(comp)) | {t.row_id for t in comp.provenance.touches if isinstance(t.row_id, str)}
    ids |= {w.target for w in comp.warnings if isinstance(w.target, str)}
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        if head in ids:
            return head, parts[cut:]
    hint = suggest(parts[0], all_ids(comp))
    raise DshctlError(f"no row {target.split('.')[0]!r} in the composition of profile {comp.profile!r}",
                      hint=f'did you mean "{hint}"?' if hint else "run 'dshctl profile dump' to see the ids")


def _at(value: Any, path: list[str]) -> tuple[Any, Loc | None]:
    loc = None
    for key in path:
        if isinstance(value, dict) and key in value:
            loc = value.loc_of(key) if isinstance(value, YMap) else loc
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            loc = value.loc_of(int(key)) if isinstance(value, YList) else loc
            value = value[int(key)]
        else:
            return MISSING, None
    return value, loc


def explain(comp: Composition, target: str) -> Explanation:
    row_id, path = split_target(comp, target)
    steps: list[Step] = []
    for t in comp.provenance.touches:
        if t.row_id != row_id or not isinstance(t.row_id, str):
            continue
        steps.extend(_steps_of(t, path))
    ids = all_ids(comp)
    for w in comp.warnings:
        if w.target == row_id:
            close = suggest(row_id, ids) if w.code in ("not-found", "insert-not-found") else None
            extra = f'; did you mean "{close}"?' if close and close != row_id else ""
            steps.append(Step(w.layer, "skipped", MISSING, w.loc, w.message + extra))
    row, parents = _find(comp, row_id)
    final = MISSING if row is None else (_at(row, path)[0] if path else row)
    exp = Explanation(row_id, path, steps, final, row is not None)
    if row is not None and not path:
        exp.disabled_by, exp.disabled_loc = _disabled_reason(row, parents, steps)
    return exp


def _steps_of(t, path: list[str]) -> list[Step]:
    if t.kind == "insert":
        value, loc = _at(t.assigned, path) if path else (t.assigned, t.loc)
        where = f" into group {t.parent_id!r}" if t.parent_id is not None else ""
        return [Step(t.layer, "inserted", value, loc or t.loc, f"inserted the row{where}")]
    if t.kind == "insert-into":
        if path and path[0] == "config":
            return [Step(t.layer, "inserted-children", MISSING, t.loc, "appended rows to the group")]
        return [] if path else [Step(t.layer, "inserted-children", MISSING, t.loc,
                                     "appended rows to the group")]
    if not path:
        keys = ", ".join(t.assigned) or "nothing"
        return [Step(t.layer, "set", dict(t.assigned), t.loc, f"set {keys}")]
    if path[0] not in t.assigned:
        return []
    value, loc = _at(t.assigned, path)
    note = "replaced the whole value" if len(path) == 1 else f"replaced {path[0]} whole"
    return [Step(t.layer, "set", value, loc or t.assigned_locs.get(path[0]) or t.loc, note)]


def _find(comp: Composition, row_id: str):
    found = (None, ())
    for row, parents in iter_rows(comp.rows):
        if row.get("id") == row_id:
            found = (row, parents)  # the loader keeps the last duplicate, as the index does
    return found


def _disabled_reason(row: dict, parents: tuple, steps: list[Step]) -> tuple[str | None, Loc | None]:
    flag = row.get("disabled")
    if js_truthy(flag):
        setter = next((s for s in reversed(steps) if s.action in ("set", "inserted")
                       and isinstance(s.value, dict) and "disabled" in s.value), None)
        kind = "conditionally (!!js)" if isinstance(flag, JsExpr) else ""
        who = setter.layer if setter else "its source"
        text = f"disabled {kind} by {who}".replace("  ", " ")
        if js_truthy(row.get("group")):
            text += " (a group stays mounted; its children unmount)"
        return text, setter.loc if setter else None
    for parent in reversed(parents):
        if js_truthy(parent.get("disabled")):
            return f"disabled because group ancestor {parent.get('id')!r} is disabled", \
                parent.loc_of("disabled") if isinstance(parent, YMap) else None
    return None, None
