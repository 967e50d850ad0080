"""What the model sees, computed from the log alone ("model-visible means logged").

``derive_history`` folds the ordered surface (``append`` adds a node, ``replace`` swaps a range of
nodes for one, as compaction does) and projects each node to its message, as dsh's
``deriveEventMessage`` does: an empty-content ``assistant/message`` (one that only carries a
max-tokens step's usage) projects to nothing. ``latest_request_header`` is the newest
``request/header`` snapshot in canonical form (empty optional fields dropped).
"""
from __future__ import annotations

from typing import Any

SURFACE_TYPES = ("user/message", "assistant/message", "tool/result")


def surface_nodes(events: list[dict]) -> list[dict]:
    by_seq: dict[int, dict] = {}
    order: list[int] = []
    for event in events:
        if event["type"] not in SURFACE_TYPES:
            continue
        op = event.get("surfaceOp")
        if op is None:
            continue
        by_seq[event["seq"]] = event
        if op == "append":
            order.append(event["seq"])
        else:
            lo, hi = order.index(op["start"]), order.index(op["end"])
            order[lo:hi + 1] = [event["seq"]]
    return [by_seq[seq] for seq in order]


def event_message(event: dict) -> dict | None:
    kind = event["type"]
    if kind == "user/message":
        return event["data"]
    if kind == "assistant/message":
        message = event["data"]["message"]
        return message if message["content"] else None
    if kind == "tool/result":
        return event["data"]["message"]
    return None


def derive_history(events: list[dict]) -> list[dict]:
    return messages_of(surface_nodes(events))


def messages_of(nodes) -> list[dict]:
    """The messages of surface ``nodes`` (events), in order; a node without one is skipped."""
    return [m for m in map(event_message, nodes) if m is not None]


def canonical_header(header: dict) -> dict:
    out: dict[str, Any] = {"config": header["config"]}
    defaults = header.get("adapterDefaults") or {}
    if defaults.get("reasoningEffort") is True or defaults.get("maxTokens") is True:
        out["adapterDefaults"] = defaults
    if header.get("system"):
        out["system"] = header["system"]
    if header.get("tools"):
        out["tools"] = header["tools"]
    return out


def latest_request_header(events: list[dict]) -> dict | None:
    for event in reversed(events):
        if event["type"] == "request/header":
            return canonical_header(event["data"]["header"])
    return None


def latest_agent_preset(events: list[dict]) -> Any:
    """The newest ``agent-preset/selected`` payload (restore picks the newest), or None."""
    for event in reversed(events):
        if event["type"] == "agent-preset/selected":
            return event["data"]
    return None
