"""``@dshctl/session-title``: a session's title from its first prompt, as dsh's ``session-title`` with
``session-title-first-prompt-llm`` make it.

At the first model request of a session without a title: a ``session/title`` fallback (the prompt's first
``fallbackMaxWords`` words, cut to ``fallbackMaxBytes``; terminal controls removed), then the title request
— logged first as ``session/title-llm-request`` (dsh's payload) and sent beside the turn's own request with
dsh's system text, the prompt framed as a JSON array of ``{seq, text}``, ``maxOutputTokens`` and thinking
off. Its answer becomes ``session/title`` (``source.kind: provider``) when the turn stops (the loop's
driver appends it, so the log is written by one writer); a failed or slow title request leaves the fallback.
"""
from __future__ import annotations

import asyncio
import json
import re
import uuid

from .api import GenerateOptions
from .assemble import assemble

name = "@dshctl/session-title"
inject = ["llm"]
schema = {"type": "object", "default": {}, "additionalProperties": False, "properties": {
    "targetWords": {"type": "integer", "minimum": 1, "default": 5},
    "targetCjkCharacters": {"type": "integer", "minimum": 1, "default": 10},
    "maxInputBytes": {"type": "integer", "minimum": 1, "default": 4096},
    "maxOutputTokens": {"type": "integer", "minimum": 1, "default": 64},
    "timeoutMs": {"type": "integer", "minimum": 1, "default": 60000},
    "fallbackMaxWords": {"type": "integer", "minimum": 1, "default": 5},
    "fallbackMaxBytes": {"type": "integer", "minimum": 1, "default": 40},
    "maxTitleBytes": {"type": "integer", "minimum": 1, "default": 80},
}}
PROVIDER_ID = "session-title-first-prompt-llm"
_CONTROLS = re.compile(r"(?:\x1b\]|\x9d)(?:(?!\x07|\x1b\\)[\s\S])*(?:\x07|\x1b\\|$)|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
                       r"|\x1b[@-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|[\u200b\u200e\u200f\u202a-\u202e"
                       r"\u2060-\u2064\u2066-\u206f\ufeff]")


def clean(text: str) -> str:
    return " ".join(_CONTROLS.sub("", text).split())


def truncate_utf8(text: str, max_bytes: int) -> str:
    out, used = [], 0
    for ch in text:
        size = len(ch.encode("utf-8"))
        if used + size > max_bytes:
            break
        out.append(ch)
        used += size
    return "".join(out)


def fallback_title(text: str, max_words: int, max_bytes: int) -> str:
    return truncate_utf8(" ".join(clean(text).split(" ")[:max_words]), max_bytes).rstrip()


def system_text(config: dict) -> str:
    return "\n".join([
        "Create a concise title for an AI coding-assistant session from the supplied human messages.",
        "Return only the title on one line, **in plain text of natural language**, with no quotes, prefix, "
        "explanation, Markdown, XML, or terminal control codes. No code is allowed.",
        "Use the language of the messages.",
        f"Aim for about {config['targetWords']} words in non-CJK languages or {config['targetCjkCharacters']} "
        "CJK characters."])


def first_prompt(events: list[dict]) -> tuple[int, str] | None:
    for event in events:
        data = event.get("data") if event.get("type") == "user/message" else None
        if isinstance(data, dict) and (data.get("source") or {}).get("kind") == "user":
            text = " ".join(b.get("text", "") for b in data.get("content") or [] if b.get("type") == "text")
            if clean(text):
                return event["seq"], text
    return None


class Titler:
    def __init__(self, ctx, config: dict):
        self.ctx, self.config = ctx, config
        self.pending: dict[int, tuple[asyncio.Task, list[int], dict]] = {}   # id(session) -> title request

    def start(self, agent) -> None:
        session = agent.session
        events = session.events
        if id(session) in self.pending or any(e.get("type") in ("session/title", "session/title-llm-request")
                                              for e in events):
            return
        found = first_prompt(events)
        if found is None:
            return
        seq, text = found
        config = self.config
        agent.append("session/title", {"title": fallback_title(text, config["fallbackMaxWords"],
                                                               config["fallbackMaxBytes"]),
                                       "messageSeqs": [seq], "source": {"kind": "fallback"}})
        framed = ("Generate the session title from this JSON array of human messages:\n"
                  + json.dumps([{"seq": seq, "text": text}], ensure_ascii=False, separators=(",", ":")))
        if len(framed.encode("utf-8")) > config["maxInputBytes"]:
            return
        llm = self.ctx.llm
        route = {"provider": llm.provider, "model": llm.model}
        messages = [{"id": str(uuid.uuid4()), "role": "user", "content": [{"type": "text", "text": framed}],
                     "source": {"kind": "plugin", "plugin": "dsh-session-title-llm"}}]
        system = system_text(config)
        agent.append("session/title-llm-request", {"titleProvider": PROVIDER_ID, "messageSeqs": [seq],
                                                   "route": route, "system": system, "messages": messages,
                                                   "maxTokens": config["maxOutputTokens"]})
        options = GenerateOptions(provider=llm.provider, model=llm.model, messages=messages, system=system,
                                  max_tokens=config["maxOutputTokens"], session_id=session.id,
                                  extra={"purpose": "session-title", "reasoningEffort": "off"})
        task = asyncio.ensure_future(self._ask(llm, options))
        self.pending[id(session)] = (task, [seq], route)

    async def _ask(self, llm, options) -> str | None:
        reply = assemble([chunk async for chunk in llm.stream(options)])
        if reply.finish.get("kind") != "stop" or reply.tool_calls:
            return None
        text = " ".join(b["text"] for b in reply.blocks if b.get("type") == "text")
        return truncate_utf8(clean(text), self.config["maxTitleBytes"]).rstrip() or None

    async def finish(self, agent) -> None:
        entry = self.pending.pop(id(agent.session), None)
        if entry is None:
            return
        task, seqs, route = entry
        try:
            title = await asyncio.wait_for(task, self.config["timeoutMs"] / 1000)
        except Exception:  # noqa: BLE001 - a failed title request keeps the fallback title
            return
        if title:
            agent.append("session/title", {"title": title, "messageSeqs": seqs,
                                           "source": {"kind": "provider", "provider": PROVIDER_ID, "model": route}})

    def cancel_all(self) -> None:
        for task, _seqs, _route in self.pending.values():
            task.cancel()
        self.pending.clear()


def apply(ctx, config):
    titler = Titler(ctx, config)

    async def on_request(payload, next_):
        agent = payload.get("agent") if isinstance(payload, dict) else None
        if agent is not None and getattr(agent, "session", None) is not None:
            titler.start(agent)
        return await next_()
    ctx.on("agent/request", on_request)

    async def on_stopping(payload):
        if payload.get("stopping"):
            await titler.finish(payload["agent"])
    ctx.on("agent/turn-stopping", on_stopping)
    ctx.effect(lambda: titler.cancel_all, "session-title: cancel open title requests")
