"""Reading the model-visible surface for compaction: token estimates and the region to summarise."""
from __future__ import annotations

import json

from dshctl.agents.session.history import event_message, surface_nodes


def estimate_tokens(message: dict | None) -> int:
    """dsh's heuristic price of a message: about four characters a token."""
    if not message:
        return 0
    return max(1, len(json.dumps(message.get("content"), ensure_ascii=False)) // 4)


def history_tokens(events: list[dict]) -> int:
    return sum(estimate_tokens(event_message(node)) for node in surface_nodes(events))


def context_window(events: list[dict], default: int) -> int:
    for event in reversed(events):
        if event["type"] == "request/context" and event["data"].get("contextWindow"):
            return int(event["data"]["contextWindow"])
    return default


def region_to_summarise(events: list[dict], retain_ratio: float) -> list[dict]:
    """The oldest surface nodes, leaving the newest ``retain_ratio`` of the tokens verbatim.

    The retained part never starts with a tool result whose call was summarised (a call and its result
    stay together), and never with a node that is itself a checkpoint of an older compaction only.
    """
    nodes = surface_nodes(events)
    prices = [estimate_tokens(event_message(n)) for n in nodes]
    keep_budget = sum(prices) * retain_ratio
    kept, cut = 0, len(nodes)
    while cut > 0 and kept + prices[cut - 1] <= keep_budget:
        cut -= 1
        kept += prices[cut]
    while cut < len(nodes) and nodes[cut]["type"] == "tool/result":
        cut += 1   # the result goes with its call into the summary
    return nodes[:cut] if cut >= 2 else []


def transcript(nodes: list[dict]) -> str:
    lines = []
    for node in nodes:
        message = event_message(node)
        if not message:
            continue
        for block in message.get("content") or []:
            kind = block.get("type")
            if kind == "text":
                lines.append(f"{message['role']}: {block['text']}")
            elif kind == "tool-call":
                lines.append(f"assistant called {block['name']}({block['arguments']})")
            elif kind == "tool-result":
                text = "".join(b.get("text", "") for b in block.get("content") or [])
                lines.append(f"tool result: {text[:2000]}")
    return "\n".join(lines)
