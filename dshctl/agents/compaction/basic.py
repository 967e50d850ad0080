"""``@dshctl/compaction-basic``: the ``compaction`` service and auto-compaction.

``compact_now(agent)`` summarises the oldest part of the surface with the session's own ``llm`` and
replaces it by one checkpoint message: ``compaction/start`` → ``compaction/summary`` → a
``user/message`` with surface op ``replace`` over the summarised nodes → ``compaction/end`` (with
``error`` when the summary failed; the surface is then unchanged). With ``auto``, a step whose history
reaches ``thresholdRatio`` of the context window is compacted before it is sent.
"""
from __future__ import annotations

import uuid

from dshctl.agents.llm.api import GenerateOptions
from dshctl.agents.llm.assemble import assemble

from dshctl.agents.session.history import event_message

from .surface import context_window, estimate_tokens, history_tokens, region_to_summarise, transcript

name = "@dshctl/compaction-basic"
inject = ["llm"]
schema = {"type": "object", "default": {}, "properties": {
    "auto": {"type": "boolean", "default": False},
    "thresholdRatio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "default": 0.8},
    "retainRatio": {"type": "number", "minimum": 0, "exclusiveMaximum": 1, "default": 0.16},
    "contextWindow": {"type": "integer", "minimum": 1, "default": 65536},
}}
PROMPT = ("Summarise the conversation below for yourself, so that you can continue the work from the "
          "summary alone: the goal, decisions made, facts learned, files touched, and what is left to do.")


class Compaction:
    def __init__(self, ctx, config: dict):
        self.ctx, self.config = ctx, config

    def needs_compaction(self, events: list[dict]) -> bool:
        window = context_window(events, self.config["contextWindow"])
        return history_tokens(events) >= self.config["thresholdRatio"] * window

    async def compact_now(self, agent, *, reason: str = "manual", turn: int | None = None,
                          source_command_id: str | None = None) -> dict | None:
        session = agent.session
        region = region_to_summarise(session.events, self.config["retainRatio"])
        if not region:
            return None
        lifecycle = {"compactionId": str(uuid.uuid4()), "turn": turn}
        if source_command_id:
            lifecycle["sourceCommandId"] = source_command_id
        start = agent.append("compaction/start", lifecycle)
        try:
            summary, llm = await self._summarise(region, agent)
        except Exception as exc:  # noqa: BLE001 - a failed compaction leaves the surface as it was
            agent.append("compaction/end", {**lifecycle, "error": f"{type(exc).__name__}: {exc}"})
            session.commit()
            raise
        first, last = region[0]["seq"], region[-1]["seq"]
        shadowed = [n["seq"] for n in region]
        record = agent.append("compaction/summary", {
            "compactionId": lifecycle["compactionId"], "summary": summary,
            "shadowedRange": {"start": first, "end": last}, "shadowedSeqs": shadowed,
            "shadowedTokenCount": sum(estimate_tokens(event_message(n)) for n in region), "provider": llm.provider, "model": llm.model})
        message = {"id": str(uuid.uuid4()), "role": "user",
                   "content": [{"type": "text", "text": f"[Summary of the earlier conversation]\n{summary}"}],
                   "source": {"kind": "plugin", "plugin": name}}
        agent.append("user/message", message, surfaceOp={"op": "replace", "start": first, "end": last},
                     sourceEventSeqs=[start["seq"], record["seq"], *shadowed])
        agent.append("compaction/end", lifecycle)
        session.commit()
        return {"summary": summary, "shadowedSeqs": shadowed, "reason": reason}

    async def _summarise(self, region: list[dict], agent):
        llm = self.ctx.llm
        options = GenerateOptions(provider=llm.provider, model=llm.model, messages=[{
            "id": str(uuid.uuid4()), "role": "user", "source": {"kind": "plugin", "plugin": name},
            "content": [{"type": "text", "text": f"{PROMPT}\n\n{transcript(region)}"}]}],
            session_id=agent.id, extra={"purpose": "compaction"})
        chunks = [chunk async for chunk in llm.stream(options)]
        reply = assemble(chunks)
        if reply.finish.get("kind") in ("error", "aborted"):
            failure = reply.finish.get("failure") or {}
            raise RuntimeError(failure.get("message", "the summary request failed"))
        text = "".join(b.get("text", "") for b in reply.blocks if b.get("type") == "text").strip()
        if not text:
            raise RuntimeError("the model returned an empty summary")
        return text, llm


def apply(ctx, config):
    compaction = Compaction(ctx, config)
    ctx.provide("compaction", compaction)
    if config["auto"]:
        async def pre_step(payload, next_):
            agent = payload["agent"]
            if compaction.needs_compaction(agent.session.events):
                try:
                    await compaction.compact_now(agent, reason="auto", turn=payload["turn"])
                except Exception as exc:  # noqa: BLE001 - the step goes on uncompacted; the log says why
                    logger = ctx.get("logger")
                    if logger is not None:
                        logger.warn(f"auto-compaction failed: {exc}")
            return await next_()
        ctx.on("agent/pre-step", pre_step)
