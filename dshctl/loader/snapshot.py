"""The running tree as plain data (``dshctl status``, ``--format json``)."""
from __future__ import annotations

from typing import Any

from dshctl.core.yaml.nodes import JsExpr

from .entry import Entry
from .errors import cause_text


def plain(value: Any) -> Any:
    """JSON-ready data; ``!!js`` stays an unevaluated ``{"__jsExpr": text}``."""
    if isinstance(value, JsExpr):
        return value.to_json()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def row_state(entry: Entry) -> str:
    if entry.fiber is not None:
        return entry.fiber.state.name
    if entry.skipped:
        return "SKIPPED"
    return "DISABLED" if entry.disabled else "STOPPED"


def snapshot_rows(entries: list[Entry]) -> list[dict]:
    out = []
    for entry in entries:
        fiber = entry.fiber
        if entry.subtree is not None:
            children = snapshot_rows(entry.subtree.roots)
        else:
            children = snapshot_rows(entry.children)
        out.append({
            "id": entry.id,
            "full_id": entry.full_id,
            "name": entry.name,
            "state": row_state(entry),
            "disabled": entry.disabled,
            "skipped": entry.skipped,
            "config": None if entry.is_group else plain(entry.options.get("config")),
            "error": cause_text(fiber.error) if fiber is not None and fiber.error is not None else None,
            "loc": str(entry.loc) if entry.loc is not None else None,
            "children": children,
        })
    return out
