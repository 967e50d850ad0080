"""`!!js` expressions in a composed profile that dshctl's Python host could not evaluate.

dsh evaluates a row's ``disabled`` and the values inside its ``config`` (cordis-runtime.md §9); the
host accepts only the subset of §12.5 (docs/jsexpr.md). ``profile dump`` lists the expressions outside
it ahead of time (issue 7, item 3), as a warning or, with ``--strict``, an error.
"""
from __future__ import annotations

from typing import Any

from dshctl.core.compose.composition import Composition, iter_rows
from dshctl.core.yaml.nodes import JsExpr, js_truthy

# Rows whose config the Loader keeps literal: a group's config is its child rows (visited as rows),
# an Include's config names a file.
_LITERAL_CONFIG_NAMES = ("cordis:group", "cordis:include")


def unsupported_expressions(comp: Composition) -> list[dict[str, Any]]:
    """One record per expression outside the subset, in tree order: the §12.5 message, the
    expression's file:line:col and a hint naming the failing column."""
    records = []
    for row, _parents in iter_rows(comp.rows):
        for key in ("disabled", "config"):
            if key not in row or not _holds_js(row[key]) or (key == "config" and _literal_config(row)):
                continue
            from dshctl.core.jsexpr import check_expressions  # most rows hold no !!js at all

            full_id, name = _row_label(row)
            for path, node, err in check_expressions(row[key], full_id=full_id, name=name,
                                                     base_path=key):
                loc = node.loc
                records.append({"row": full_id, "path": path, "expression": node.expr,
                                "message": err.message, "hint": err.hint,
                                "file": loc.file if loc else "", "line": loc.line if loc else 0,
                                "column": loc.column if loc else 0})
    return records


def _holds_js(value: Any) -> bool:
    """True when a ``!!js`` node is somewhere in ``value`` (a cheap walk before the full one)."""
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, list):
        return isinstance(value, JsExpr)
    for item in value:
        kind = type(item)
        if kind in _SCALARS:
            continue
        if kind is JsExpr or _holds_js(item):
            return True
    return False


_SCALARS = frozenset([str, int, float, bool, type(None)])


def _literal_config(row: dict) -> bool:
    return ((js_truthy(row.get("group")) and isinstance(row.get("config"), list))
            or row.get("name") in _LITERAL_CONFIG_NAMES)


def _row_label(row: dict) -> tuple[str, str]:
    row_id, name = row.get("id"), row.get("name")
    return (row_id if isinstance(row_id, str) and row_id else "<no id>",
            name if isinstance(name, str) and name else "<no name>")
