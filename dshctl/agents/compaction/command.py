"""``@dshctl/command-compact``: ``/compact`` in the chat compacts the session now (needs the
``compaction`` service of ``@dshctl/compaction-basic``); the command itself never reaches the model."""
from __future__ import annotations

name = "@dshctl/command-compact"
inject = ["compaction"]
schema = {"type": "object", "default": {}}


def is_compact(message: dict) -> bool:
    text = "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")
    return message.get("role") == "user" and text.strip().lower() == "/compact"


def apply(ctx, config):
    async def pre_step(payload, next_):
        decision = await next_()
        messages = decision.get("messages") if isinstance(decision, dict) else None
        keep = [m for m in messages or [] if not is_compact(m)]
        if messages is None or len(keep) == len(messages):
            return decision
        try:
            await ctx.compaction.compact_now(payload["agent"], reason="/compact", turn=payload["turn"])
        except Exception as exc:  # noqa: BLE001 - the user sees why in the log; the turn goes on
            logger = ctx.get("logger")
            if logger is not None:
                logger.warn(f"/compact failed: {exc}")
        return {**decision, "messages": keep}
    ctx.on("agent/pre-step", pre_step)
