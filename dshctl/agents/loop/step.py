"""One step: the request rebuilt from the log, the model's stream logged chunk by chunk, the reply, its
tool calls. Returns the step's end (``completed`` / ``max-tokens``) or None when tools ran and the turn
goes on."""
from __future__ import annotations

import uuid

from dshctl.agents.llm.api import GenerateOptions, LlmError, LlmFailure
from dshctl.agents.tools.hooks import waterfall
from dshctl.agents.tools.scheduler import run_tool_calls

from .system_prompt import system_prompt

TRUNCATED = LlmFailure("the model's stream ended without a finish (empty or truncated stream)",
                       "STREAM_TRUNCATED")


class TurnAborted(Exception):
    """The turn's abort signal was set; the turn ends ``aborted`` with the agent's abort cause."""


async def run_step(agent, turn: int, step: int) -> dict | None:
    options = await build_request(agent, turn, step)
    options.messages = agent.history.messages(agent.session.events)
    chunks, seqs = await stream_reply(agent, options, turn, step)
    reply = _assemble(chunks)
    finish = reply.finish if any(c.get("type") == "finish" for c in chunks) else \
        {"kind": "error", "failure": TRUNCATED.to_json()}
    if finish["kind"] in ("error", "aborted"):
        if agent.abort_event.is_set():
            raise TurnAborted()
        raise LlmError(_failure(finish.get("failure")))
    message = {"id": str(uuid.uuid4()), "role": "assistant", "content": list(reply.blocks),
               "source": {"kind": "model", "provider": options.provider, "model": options.model}}
    data = {"turn": turn, "step": step, "message": message}
    if reply.usage is not None:
        data["usage"] = reply.usage
    agent.append("assistant/message", data, surfaceOp="append", sourceEventSeqs=seqs)
    if finish["kind"] == "max-tokens":
        return {"kind": "max-tokens"}
    calls = [block for block in message["content"] if block.get("type") == "tool-call"]
    if not calls:
        return {"kind": "completed"}
    concluded = await run_tool_calls(agent, turn, step, calls, agent.loop.max_parallel)
    return {"kind": "completed"} if concluded else None


async def build_request(agent, turn: int, step: int) -> GenerateOptions:
    """The call config through ``agent/request``; a changed header is logged before it is used."""
    from dshctl.agents.session.history import canonical_header
    llm = agent.loop.llm(agent)
    base = {"provider": llm.provider, "model": agent.options.get("model") or llm.model}
    if agent.options.get("maxTokens"):
        base["maxTokens"] = int(agent.options["maxTokens"])
    config = await waterfall(agent.ctx, "agent/request", {"agent": agent, "turn": turn, "step": step,
                                                         "signal": agent.abort_event}, default=lambda: base)
    header = {"config": dict(config)}
    system = await system_prompt(agent, turn, step)
    if system:
        header["system"] = system
    tools = [tool.schema() for tool in agent.loop.tools_of(agent)]
    if tools:
        header["tools"] = tools
    header = canonical_header(header)
    logged = agent.history.header(agent.session.events)
    if not agent.request_header_logged:
        # as dsh: every loop instance logs the header of its first request, "resume" over an older one
        agent.append("request/header", {"header": header, "reason": "initial" if logged is None else "resume"})
        agent.request_header_logged = True
    elif logged != header:
        agent.append("request/header", {"header": header, "reason": "change"})
    return GenerateOptions(provider=config["provider"], model=config["model"], messages=[],
                           system=header.get("system"), tools=header.get("tools"),
                           max_tokens=config.get("maxTokens"), session_id=agent.session.id,
                           abort=agent.abort_event)


async def stream_reply(agent, options: GenerateOptions, turn: int, step: int) -> tuple[list, list]:
    """Every chunk is logged as it arrives; an abort keeps the delivered text as an interrupted message."""
    llm = agent.loop.llm(agent)
    chunks, seqs = [], []
    budget = _ReplyBudget(getattr(agent.loop, "config", {}))
    stream = await waterfall(agent.ctx, "llm/stream", options, default=lambda: llm.stream(options))
    try:
        async for chunk in stream:
            if agent.abort_event.is_set():
                break
            over = budget.spend(chunk)
            if over is not None:   # an endless or oversized stream: stop reading it
                chunks.append({"type": "finish", "reason": {"kind": "error", "failure": over.to_json()}})
                break
            seqs.append(agent.append("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk})["seq"])
            chunks.append(chunk)
    except Exception as exc:  # noqa: BLE001 - an adapter that raises instead of finishing
        chunks.append({"type": "finish", "reason": {"kind": "error", "failure": LlmFailure(
            f"the model stream failed: {type(exc).__name__}: {exc}", "STREAM").to_json()}})
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
    if agent.abort_event.is_set():
        _keep_interrupted(agent, options, chunks, seqs, turn, step)
        raise TurnAborted()
    return chunks, seqs


class _ReplyBudget:
    """``maxReplyChunks`` and ``maxReplyBytes`` (of text deltas and tool-call arguments) per reply."""

    def __init__(self, config: dict):
        self.chunks_left = config.get("maxReplyChunks", 100_000)
        self.bytes_left = config.get("maxReplyBytes", 32 * 1024 * 1024)

    def spend(self, chunk) -> LlmFailure | None:
        self.chunks_left -= 1
        if isinstance(chunk, dict):
            for key in ("text", "argumentsDelta", "delta", "arguments"):
                if isinstance(chunk.get(key), str):
                    self.bytes_left -= len(chunk[key])
        if self.chunks_left < 0 or self.bytes_left < 0:
            return LlmFailure("the model's reply went past maxReplyChunks / maxReplyBytes (an endless "
                              "or oversized stream); the turn stops here", "STREAM_TOO_LONG")
        return None


def _keep_interrupted(agent, options, chunks, seqs, turn, step) -> None:
    reply = _assemble([c for c in chunks if c.get("type") != "finish"])
    content = [b for b in reply.blocks if b.get("type") in ("text", "reasoning") and b.get("text")]
    if not content:
        return
    message = {"id": str(uuid.uuid4()), "role": "assistant", "content": content,
               "source": {"kind": "model", "provider": options.provider, "model": options.model}}
    agent.append("assistant/message", {"turn": turn, "step": step, "message": message, "interrupted": True},
                 surfaceOp="append", sourceEventSeqs=seqs)


def _assemble(chunks):
    from dshctl.agents.llm.assemble import assemble
    return assemble(chunks)


def _failure(raw) -> LlmFailure:
    if isinstance(raw, LlmFailure):
        return raw
    raw = raw if isinstance(raw, dict) else {}
    return LlmFailure(str(raw.get("message") or "the model request failed"), str(raw.get("code") or "UNKNOWN"),
                      raw.get("status"), raw.get("providerRetryAfterMs"), raw.get("requestId"))
