"""The sessions of a store as families: roots with their sub-agents under them (``session list --tree``).

A child's row adds what its log says: the descriptor's label and mode, the model of its last request,
its state (``settled``, or ``cut`` when a crash left a turn open) and the stop reason of its last turn.
Only children's logs are read; roots are listed from their headers, as ``session list`` lists them.
"""
from __future__ import annotations

from . import descriptor as descriptors


def child_detail(store, session_id: str) -> dict:
    try:
        seen = store.read(session_id)
    except Exception as exc:  # noqa: BLE001 - an unreadable child is shown with its error
        return {"state": "unreadable", "error": str(exc)}
    try:
        found = descriptors.fold(seen.events) or {}
    except descriptors.BadDescriptor:
        found = {}
    model = next((e["data"]["header"]["config"].get("model") for e in reversed(seen.events)
                  if e["type"] == "request/header"), None)
    end = next((e["data"]["reason"]["kind"] for e in reversed(seen.events) if e["type"] == "turn/end"), None)
    out = {"label": found.get("label"), "mode": found.get("mode"), "provider": found.get("provider"),
           "model": model, "state": "cut" if seen.closers else "settled", "stopReason": end}
    return {k: v for k, v in out.items() if v is not None}


def families(store) -> list[dict]:
    """``[{"info": SessionInfo, "detail": {...}, "children": [...]}]``, roots newest first; a child whose
    parent is not in the store is shown as a root."""
    infos = store.list()
    nodes = {i.id: {"info": i, "detail": {}, "children": []} for i in infos if i.error is None}
    roots = []
    for info in infos:
        node = nodes.get(info.id) or {"info": info, "detail": {}, "children": []}
        parent = info.header.get("parentSession") if info.error is None else None
        if parent is not None:
            node["detail"] = child_detail(store, info.id)
        if parent in nodes:
            nodes[parent]["children"].append(node)
        else:
            roots.append(node)
    for node in nodes.values():
        node["children"].sort(key=lambda n: (n["info"].header.get("createdAt", 0), n["info"].id))
    return roots


def flatten(nodes: list[dict], depth: int = 0):
    for node in nodes:
        yield depth, node
        yield from flatten(node["children"], depth + 1)


def to_json(nodes: list[dict]) -> list[dict]:
    return [{**node["info"].to_json(), **node["detail"], "children": to_json(node["children"])} for node in nodes]
