"""``@dshctl/tool-result-pruner``: a tool result longer than ``maxChars`` is trimmed on the surface
(head and tail kept, the middle replaced by a marker) before the next step is sent. The original stays
in the log; ``compaction/prune`` records what was shadowed, then a ``tool/result`` with surface op
``replace`` over that one node carries the trimmed copy, as dsh's pruner does."""
from __future__ import annotations

import copy

from dshctl.agents.session.history import event_message, surface_nodes

from .surface import estimate_tokens

name = "@dshctl/tool-result-pruner"
schema = {"type": "object", "default": {}, "properties": {
    "maxChars": {"type": "integer", "minimum": 200, "default": 20000},
    "keepChars": {"type": "integer", "minimum": 50, "default": 2000},
}}


def trimmed(text: str, keep: int) -> str:
    head, tail = text[: keep // 2], text[-(keep // 2):]
    return f"{head}\n…[{len(text) - len(head) - len(tail)} characters pruned]…\n{tail}"


def prune(agent, max_chars: int, keep: int) -> int:
    pruned = 0
    for node in surface_nodes(agent.session.events):
        if node["type"] != "tool/result":
            continue
        result = node["data"]["message"]["content"][0]
        blocks = result.get("content") or []
        size = sum(len(b.get("text", "")) for b in blocks)
        if size <= max_chars:
            continue
        data = copy.deepcopy(node["data"])
        data["message"]["content"][0]["content"] = [
            {**b, "text": trimmed(b["text"], keep)} if b.get("type") == "text" and len(b["text"]) > keep else b
            for b in blocks]
        seq = node["seq"]
        agent.append("compaction/prune", {"shadowedRange": {"start": seq, "end": seq}, "shadowedSeqs": [seq],
                                          "shadowedTokenCount": estimate_tokens(event_message(node))})
        agent.append("tool/result", data, surfaceOp={"op": "replace", "start": seq, "end": seq},
                     sourceEventSeqs=[seq])
        pruned += 1
    return pruned


def apply(ctx, config):
    async def pre_step(payload, next_):
        prune(payload["agent"], config["maxChars"], config["keepChars"])
        return await next_()
    ctx.on("agent/pre-step", pre_step)
