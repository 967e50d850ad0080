"""The contract every ``llm`` adapter and every caller shares, in dsh's own shapes (``@deepseek-ai/dsh-llm``
``types.ts``/``message.ts``). Values that reach the session log are plain JSON dicts with dsh's
camelCase keys, so the log is dsh's format without translation.

Content blocks (dicts):  {"type": "text", "text"} | {"type": "reasoning", "text"}
                         | {"type": "tool-call", "id", "name", "arguments": <raw JSON text>}
                         | {"type": "tool-result", "toolCallId", "content": [blocks], "isError"?}
Message (dict):          {"id", "role": "system"|"user"|"assistant", "content": [blocks], "source"}
                         source: {"kind": "user"} | {"kind": "model", "provider", "model"}
                                 | {"kind": "tool", "callId"} | {"kind": "plugin", "plugin", ...}
Stream chunks (dicts, in order; usage before the terminal finish, nothing after it):
    {"type": "block-start", "index", "blockType"}
    {"type": "text-delta", "index", "text"}      {"type": "reasoning-delta", "index", "text"}
    {"type": "tool-call-delta", "index", "id", "name"?, "argumentsDelta"}
    {"type": "block-end", "index", "block"}      {"type": "usage", "usage": TokenUsage}
    {"type": "finish", "reason": FinishReason}
FinishReason:  {"kind": "stop"} | {"kind": "tool-calls"} | {"kind": "max-tokens"}
               | {"kind": "aborted", "failure": LlmFailure} | {"kind": "error", "failure": LlmFailure}
TokenUsage:    {"inputTokens", "outputTokens", "cacheReadTokens"?, "cacheWriteTokens"?, "reasoningTokens"?}
ToolSchema:    {"name", "description", "parameters": <JSON Schema>}
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Protocol

LLM_SERVICE = "llm"          # the service name adapters provide and the agent loop injects


def route_service(provider: str) -> str:
    """The service an adapter row with ``route: true`` provides instead of ``llm``: the agents whose
    ``provider`` option names it (a sub-agent's ``agentOptions.provider``) are served by that row."""
    return f"{LLM_SERVICE}:{provider}"


# An llm row's ``prices``: what a million tokens cost (dsh has no such setting; docs/agents.md, "Cost").
# ``input``: prompt tokens not served from the cache, ``output``: completion tokens (reasoning included),
# ``cacheHit``: prompt tokens served from the cache (default: the input price).
PRICES_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["input", "output"],
    "properties": {
        "input": {"type": "number", "minimum": 0},
        "output": {"type": "number", "minimum": 0},
        "cacheHit": {"type": "number", "minimum": 0},
        "currency": {"type": "string", "minLength": 1, "default": "USD"},
    },
}


def plain_prices(prices: Any) -> dict | None:
    """The row's prices as plain JSON (the loader hands mappings), None when it sets none."""
    if not prices:
        return None
    out = {str(k): (v if isinstance(v, str) else float(v)) for k, v in dict(prices).items()}
    out.setdefault("currency", "USD")
    return out

StreamChunk = dict[str, Any]
Message = dict[str, Any]
ContentBlock = dict[str, Any]


@dataclass(frozen=True)
class LlmFailure:
    """A provider or transport failure, as dsh records it (``LlmFailure``); never carries the API key."""
    message: str
    code: str                      # provider-neutral routing code, e.g. "HTTP_429", "TIMEOUT", "STREAM"
    status: int | None = None
    provider_retry_after_ms: int | None = None
    request_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.status is not None:
            out["status"] = self.status
        if self.provider_retry_after_ms is not None:
            out["providerRetryAfterMs"] = self.provider_retry_after_ms
        if self.request_id is not None:
            out["requestId"] = self.request_id
        return out


class LlmError(Exception):
    def __init__(self, failure: LlmFailure):
        super().__init__(failure.message)
        self.failure = failure


@dataclass
class GenerateOptions:
    """One fully assembled model request (dsh's ``GenerateOptions``)."""
    provider: str
    model: str
    messages: list[Message]
    system: str | None = None
    tools: list[dict[str, Any]] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    stop: list[str] | None = None
    session_id: str | None = None
    abort: asyncio.Event | None = None      # set() aborts the request (AbortSignal)
    extra: dict[str, Any] = field(default_factory=dict)


class LlmAdapter(Protocol):
    """What an adapter plugin provides as the ``llm`` service."""
    provider: str                            # registered route, e.g. "openai", "script"
    model: str                               # default model from the row's config

    def stream(self, options: GenerateOptions) -> AsyncIterator[StreamChunk]:
        """Yield dsh's stream chunks; a failure ends with a terminal ``finish`` whose reason is
        ``error`` (or ``aborted`` when ``options.abort`` was set) instead of raising."""
        ...
