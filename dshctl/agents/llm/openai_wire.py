"""The Chat Completions wire format: request bodies out, SSE payloads in (as dsh's DeepSeek adapter).

Requests: the system prompt first, then messages — an assistant message with its text, its
reasoning as ``reasoning_content`` and its tool calls; a tool result as a ``tool`` message. Responses:
each payload's ``delta`` opens blocks as content first appears (reasoning, text, each tool call by
its wire ``index``) and yields deltas; ``[DONE]`` closes every block in opening order, then usage,
then the finish. ``finish_reason: length`` is ``max-tokens``; a completed reply with no content is
an ``EMPTY_RESPONSE`` error.
"""
from __future__ import annotations

import email.utils
import json
import re
import time
from typing import Any

from dshctl.agents.llm.api import GenerateOptions, LlmError, LlmFailure, StreamChunk

DONE = "[DONE]"


def _text_of(blocks: list[dict]) -> str:
    return "".join(b.get("text", "") for b in blocks if b.get("type") == "text")


TOOL_RESULT_IMAGE_TEXT = "Attached image(s) from tool result:"   # dsh's words before a tool's images


def _image_part(block: dict) -> dict:
    return {"type": "image_url", "image_url": {"url": f"data:{block.get('mediaType')};base64,{block.get('data', '')}"}}


def _parts(blocks: list[dict]) -> list[dict]:
    """Text and image blocks as Chat Completions content parts, in order (empty texts dropped, as dsh)."""
    parts = []
    for block in blocks:
        if block.get("type") == "text" and block.get("text"):
            parts.append({"type": "text", "text": block["text"]})
        elif block.get("type") == "image" and block.get("data"):
            parts.append(_image_part(block))
    return parts


def _user_content(blocks: list[dict]):
    """A text-only user message stays a string on the wire; one with images becomes a list of parts."""
    parts = _parts(blocks)
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _assistant(content: list[dict]) -> dict:
    out: dict[str, Any] = {"role": "assistant", "content": _text_of(content)}
    reasoning = "".join(b["text"] for b in content if b.get("type") == "reasoning")
    if reasoning:
        out["reasoning_content"] = reasoning
    calls = [{"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": b["arguments"]}}
             for b in content if b.get("type") == "tool-call"]
    if calls:
        out["tool_calls"] = calls
    return out


def serialize_messages(options: GenerateOptions) -> list[dict]:
    """As dsh's llm-deepseek: a tool result is a ``tool`` message of its text; its images (read_image)
    follow the run of tool messages in one user message, after dsh's "Attached image(s)" line, since a
    ``tool`` message cannot carry images."""
    wire: list[dict] = []
    pending_images: list[dict] = []

    def flush_images():
        if pending_images:
            wire.append({"role": "user", "content": [{"type": "text", "text": TOOL_RESULT_IMAGE_TEXT},
                                                     *pending_images]})
            pending_images.clear()

    if options.system:
        wire.append({"role": "system", "content": options.system})
    for message in options.messages:
        content = message.get("content") or []
        role = message.get("role")
        if role in ("system", "assistant"):
            flush_images()
            wire.append({"role": "system", "content": _text_of(content)} if role == "system" else _assistant(content))
            continue
        results = [b for b in content if b.get("type") == "tool-result"]
        user = _user_content([b for b in content if b.get("type") != "tool-result"])
        if user or not results:
            flush_images()
            wire.append({"role": "user", "content": user})
        for result in results:
            blocks = result.get("content") or []
            wire.append({"role": "tool", "tool_call_id": result["toolCallId"],
                         "content": _text_of(blocks) or "(no output)"})
            pending_images += [p for p in _parts(blocks) if p["type"] == "image_url"]
    flush_images()
    return wire


EFFORTS = ("off", "low", "high", "max")


def resolve_thinking(effort: str | None, thinking: str | None) -> dict:
    """dsh's llm-deepseek rule: an effort of low/high/max turns thinking on at that effort, ``off`` turns it
    off (never sent as an effort), none leaves the deployment's ``thinking`` (or nothing) on the wire."""
    if effort is not None and effort not in EFFORTS:
        raise ValueError(f'DeepSeek does not support reasoning effort "{effort}"')
    if thinking == "disabled" and effort not in (None, "off"):
        raise ValueError(f'DeepSeek deployment does not support reasoning effort "{effort}"')
    if effort == "off":
        return {"thinking": {"type": "disabled"}}
    if effort is not None:
        return {"thinking": {"type": "enabled"}, "reasoning_effort": effort}
    return {} if thinking is None else {"thinking": {"type": thinking}}


def request_body(options: GenerateOptions, *, effort: str | None = None, thinking: str | None = None) -> dict:
    """The wire body; ``effort`` / ``thinking`` are the row's defaults (``options.extra["reasoningEffort"]``
    overrides the effort for one request)."""
    body: dict[str, Any] = {"model": options.model, "messages": serialize_messages(options), "stream": True,
                            "stream_options": {"include_usage": True},
                            **resolve_thinking(options.extra.get("reasoningEffort", effort), thinking)}
    if options.tools:
        body["tools"] = [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                                           "parameters": t.get("parameters") or {"type": "object"}}}
                         for t in options.tools]
    if options.max_tokens is not None:
        body["max_tokens"] = options.max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.stop:
        body["stop"] = options.stop
    body.update(options.extra.get("body", {}))
    return body


def map_finish(reason: str) -> dict:
    if reason == "stop":
        return {"kind": "stop"}
    if reason == "tool_calls":
        return {"kind": "tool-calls"}
    if reason == "length":
        return {"kind": "max-tokens"}
    return {"kind": "error", "failure": {"message": f"model stopped: {reason}", "code": reason.upper()}}


def map_usage(usage: dict) -> dict:
    cache = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", usage.get("prompt_cache_hit_tokens"))
    reasoning = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
    out = {"inputTokens": int(usage.get("prompt_tokens", 0)) - int(cache or 0),
           "outputTokens": int(usage.get("completion_tokens", 0))}
    if cache is not None:
        out["cacheReadTokens"] = int(cache)
    if reasoning is not None:
        out["reasoningTokens"] = int(reasoning)
    return out


class Translator:
    """SSE payload strings in, dsh stream chunks out."""

    def __init__(self) -> None:
        self.next_index = 0
        self.text: dict | None = None
        self.reasoning: dict | None = None
        self.tools: dict[int, dict] = {}
        self.order: list[dict] = []
        self.finish: dict | None = None
        self.usage: dict | None = None
        self.done = False

    def _open(self, kind: str, out: list) -> dict:
        block = {"index": self.next_index, "kind": kind, "text": ""}
        self.next_index += 1
        self.order.append(block)
        out.append({"type": "block-start", "index": block["index"], "blockType": kind})
        return block

    def feed(self, payload: str) -> list[StreamChunk]:
        if payload == DONE:
            self.done = True
            return self._close()
        try:
            chunk = json.loads(payload)
        except ValueError:
            raise LlmError(LlmFailure(f"malformed SSE payload: {payload[:120]}", "MALFORMED_RESPONSE")) from None
        if not isinstance(chunk, dict):
            raise LlmError(LlmFailure(f"malformed SSE payload: {payload[:120]}", "MALFORMED_RESPONSE"))
        if isinstance(chunk.get("error"), dict):          # some servers report failures in-stream
            error = chunk["error"]
            raise LlmError(LlmFailure(str(error.get("message") or "provider error in stream"), "STREAM"))
        out: list[StreamChunk] = []
        for choice in chunk.get("choices") or []:
            self._delta(choice.get("delta") or {}, out)
            if isinstance(choice.get("finish_reason"), str):
                self.finish = map_finish(choice["finish_reason"])
        if isinstance(chunk.get("usage"), dict):
            self.usage = map_usage(chunk["usage"])
        return out

    def _delta(self, delta: dict, out: list) -> None:
        reasoning = delta.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning = self.reasoning or self._open("reasoning", out)
            self.reasoning["text"] += reasoning
            out.append({"type": "reasoning-delta", "index": self.reasoning["index"], "text": reasoning})
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text = self.text or self._open("text", out)
            self.text["text"] += content
            out.append({"type": "text-delta", "index": self.text["index"], "text": content})
        for call in delta.get("tool_calls") or []:
            wire_index = call.get("index", 0)
            block = self.tools.get(wire_index)
            if block is None:
                block = self.tools[wire_index] = self._open("tool-call", out)
            if call.get("id") is not None:
                block["id"] = call["id"]
            function = call.get("function") or {}
            if function.get("name") is not None:
                block["name"] = function["name"]
            fragment = function.get("arguments") or ""
            block["text"] += fragment
            piece = {"type": "tool-call-delta", "index": block["index"], "id": block.get("id", "")}
            if "name" in block:
                piece["name"] = block["name"]
            piece["argumentsDelta"] = fragment
            out.append(piece)

    def _close(self) -> list[StreamChunk]:
        out: list[StreamChunk] = []
        for block in self.order:
            if block["kind"] == "tool-call":
                final = {"type": "tool-call", "id": block.get("id", ""), "name": block.get("name", ""),
                         "arguments": block["text"]}
            else:
                final = {"type": block["kind"], "text": block["text"]}
            out.append({"type": "block-end", "index": block["index"], "block": final})
        if self.usage is not None:
            out.append({"type": "usage", "usage": self.usage})
        reason = self.finish or {"kind": "stop"}
        if reason["kind"] == "stop" and not self.order:
            reason = {"kind": "error", "failure": {"message": "model returned a completed response with no content",
                                                   "code": "EMPTY_RESPONSE"}}
        out.append({"type": "finish", "reason": reason})
        return out


def http_error_code(status: int, detail: str) -> str:
    if status in (401, 403):
        return "AUTH"
    if status == 413:
        return "INVALID_REQUEST"
    if re.search(r"insufficient[ _]balance|quota", detail, re.I):
        return "QUOTA"
    if status == 429:
        return "RATE_LIMIT"
    if status == 400:
        return "CONTEXT_WINDOW_EXCEEDED" if re.search(r"context[ _](length|window)", detail, re.I) \
            else "INVALID_REQUEST"
    if status >= 500:
        return "SERVER"
    return f"HTTP_{status}"


def retry_after_ms(value: str | None) -> int | None:
    """``Retry-After`` as milliseconds: delta-seconds or an HTTP date; None when absent or past."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        delay = int(value) * 1000
        return delay if delay > 0 else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    delay = int((when.timestamp() - time.time()) * 1000)
    return delay if delay > 0 else None


class SseParser:
    """Server-sent events from text lines: ``data:`` fields joined by newlines, a blank line ends one."""

    def __init__(self) -> None:
        self.data: list[str] = []

    def line(self, line: str) -> str | None:
        line = line.rstrip("\r")
        if not line:
            if not self.data:
                return None
            payload, self.data = "\n".join(self.data), []
            return payload
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if field == "data":
            self.data.append(value[1:] if value.startswith(" ") else value)
        return None
