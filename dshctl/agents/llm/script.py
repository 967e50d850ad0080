"""``@dshctl/llm-script``: a deterministic model that replays a script of replies, one per request.

Config: ``script`` (a YAML file, relative to the file that declares the row) or inline ``replies``;
each reply is ``{text?, reasoning?, toolCalls?: [{name, arguments: <dict or JSON text>, id?}],
finish?: stop|length, delayMs?, when?}``. A reply with ``when`` serves only a request whose last message
contains that text (so parallel sub-agents each get their own); a request takes the first unused reply it
may take. Replies are streamed as the OpenAI adapter streams a real model
(reasoning, then text, then tool calls, each as a few deltas), so everything downstream sees the
same chunk shapes. After the last reply it answers ``(script exhausted)``. The position in the
script belongs to the service instance: a reload of the row starts the script over.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, AsyncIterator

from dshctl.agents.llm.api import LLM_SERVICE, PRICES_SCHEMA, GenerateOptions, LlmFailure, StreamChunk, plain_prices

name = "@dshctl/llm-script"
PROVIDER = "script"
EXHAUSTED = "(script exhausted)"
_REPLY = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "text": {"type": "string"},
        "reasoning": {"type": "string"},
        "toolCalls": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1}, "id": {"type": "string", "minLength": 1},
                           "arguments": {"type": ["object", "string"]}}}},
        "finish": {"enum": ["stop", "length"]},
        "delayMs": {"type": "integer", "minimum": 0},
        "when": {"type": "string", "minLength": 1},
        "usage": {"type": "object"},
    },
}
schema = {
    "type": "object",
    "default": {},
    "properties": {
        "model": {"type": "string", "default": "scripted"},
        "script": {"type": "string"},
        "replies": {"type": "array", "items": _REPLY},
        "prices": PRICES_SCHEMA,
    },
}


class ScriptError(ValueError):
    pass


def load_script(path: Path) -> list[dict]:
    """The replies of a YAML script file (a list, or ``{replies: [...]}``), validated."""
    from jsonschema import Draft202012Validator

    from dshctl.core.yaml.dialect import load_yaml
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read script {path}: {exc.strerror or exc}") from None
    data = load_yaml(text, str(path)).value
    replies = data.get("replies") if isinstance(data, dict) else data
    if not isinstance(replies, list):
        raise ScriptError(f"{path}: a script is a list of replies (or a mapping with `replies`)")
    validator = Draft202012Validator(_REPLY)
    for i, reply in enumerate(replies):
        error = next(iter(validator.iter_errors(reply)), None)
        if error is not None:
            where = getattr(reply, "loc", None) or path
            raise ScriptError(f"{where}: reply {i + 1}: {error.message}")
    return [json.loads(json.dumps(r)) for r in replies]


def _pieces(text: str, parts: int = 3) -> list[str]:
    """``text`` in a few deltas (whole words where possible), as a model streams it."""
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[i:i + size] for i in range(0, len(text), size)]


def reply_chunks(reply: dict, request_no: int) -> list[StreamChunk]:
    chunks: list[StreamChunk] = []
    index = 0
    for kind, key in (("reasoning", "reasoning"), ("text", "text")):
        if reply.get(key):
            chunks.append({"type": "block-start", "index": index, "blockType": kind})
            for piece in _pieces(reply[key]):
                chunks.append({"type": f"{kind}-delta", "index": index, "text": piece})
            chunks.append({"type": "block-end", "index": index, "block": {"type": kind, "text": reply[key]}})
            index += 1
    calls = reply.get("toolCalls") or []
    for n, call in enumerate(calls):
        args = call.get("arguments", {})
        text = args if isinstance(args, str) else json.dumps(args, separators=(",", ":"))
        call_id = call.get("id") or f"call_{request_no}_{n + 1}"
        chunks.append({"type": "block-start", "index": index, "blockType": "tool-call"})
        for piece in _pieces(text) or [""]:
            chunks.append({"type": "tool-call-delta", "index": index, "id": call_id, "name": call["name"],
                           "argumentsDelta": piece})
        chunks.append({"type": "block-end", "index": index,
                       "block": {"type": "tool-call", "id": call_id, "name": call["name"], "arguments": text}})
        index += 1
    usage = reply.get("usage") or {"inputTokens": 0, "outputTokens": sum(
        len(c.get("text", c.get("argumentsDelta", ""))) for c in chunks if c["type"].endswith("-delta"))}
    # a usage written in the row's YAML arrives as the loader's mapping: the log takes plain JSON
    chunks.append({"type": "usage", "usage": {str(k): v for k, v in dict(usage).items()}})
    if reply.get("finish") == "length":
        reason = {"kind": "max-tokens"}
    else:
        reason = {"kind": "tool-calls"} if calls else {"kind": "stop"}
    chunks.append({"type": "finish", "reason": reason})
    return chunks


class ScriptedModel:
    """The ``llm`` service of ``@dshctl/llm-script``."""

    def __init__(self, replies: list[dict], model: str = "scripted"):
        self.provider = PROVIDER
        self.model = model
        self.replies = replies
        self.requests: list[GenerateOptions] = []     # every request, in order (tests read them)
        self.used: set[int] = set()

    async def stream(self, options: GenerateOptions) -> AsyncIterator[StreamChunk]:
        self.requests.append(options)
        n = len(self.requests)
        reply = self._next_reply(_last_text(options.messages))
        chunks = reply_chunks(reply, n)
        pause = reply.get("delayMs", 0) / 1000 / len(chunks)     # delayMs spread over the stream
        for chunk in chunks:
            if pause:
                await _wait(pause, options.abort)
            if options.abort is not None and options.abort.is_set():
                yield {"type": "finish", "reason": {"kind": "aborted", "failure": LlmFailure(
                    "request aborted by caller", "ABORTED").to_json()}}
                return
            yield chunk
        await asyncio.sleep(0)

    def _next_reply(self, last: str) -> dict:
        for i, reply in enumerate(self.replies):
            if i not in self.used and (reply.get("when") is None or reply["when"] in last):
                self.used.add(i)
                return reply
        return {"text": EXHAUSTED}


def _last_text(messages) -> str:
    """The text of the request's last message (tool results' text included)."""
    if not messages:
        return ""
    out = []
    for block in messages[-1].get("content") or []:
        out.append(block.get("text") or "")
        for inner in block.get("content") or [] if block.get("type") == "tool-result" else []:
            out.append(inner.get("text") or "" if isinstance(inner, dict) else "")
    return "\n".join(out)


async def _wait(seconds: float, abort: asyncio.Event | None) -> None:
    if abort is None:
        await asyncio.sleep(seconds)
        return
    try:
        await asyncio.wait_for(abort.wait(), seconds)
    except asyncio.TimeoutError:
        pass


def _declared_dir(ctx) -> Path:
    loader = ctx.get("loader")
    entry = getattr(loader, "fibers", {}).get(ctx.fiber) if loader is not None else None
    return entry.declared_dir if entry is not None else Path.cwd()


def apply(ctx, config):
    replies = list(config.get("replies") or [])
    if config.get("script"):
        path = Path(config["script"])
        if not path.is_absolute():
            path = _declared_dir(ctx) / path
        replies = load_script(path) + replies
    model = ScriptedModel(replies, config.get("model", "scripted"))
    model.prices = plain_prices(config.get("prices"))
    ctx.provide(LLM_SERVICE, model)
