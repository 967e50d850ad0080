"""Building realistic session logs for the session tests: one turn = the events dsh's loop writes."""
from __future__ import annotations

import json


def user_message(text: str, mid: str) -> dict:
    return {"id": mid, "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}


def assistant_message(mid: str, blocks: list[dict]) -> dict:
    return {"id": mid, "role": "assistant", "content": blocks,
            "source": {"kind": "model", "provider": "script", "model": "demo"}}


def tool_result(mid: str, call_id: str, text: str, is_error: bool = False) -> dict:
    block = {"type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": text}]}
    if is_error:
        block["isError"] = True
    return {"id": mid, "role": "user", "content": [block], "source": {"kind": "tool", "callId": call_id}}


def write_turn(log, turn: int, prompt: str, *, tool: bool = True, deltas: int = 4, end: bool = True) -> None:
    """A turn with a request header, streamed text, optionally one tool call and its result."""
    log.append("turn/start", {"turn": turn})
    log.append("user/message", user_message(prompt, f"u{turn}"))
    step = 1
    log.append("step/start", {"turn": turn, "step": step})
    log.append("request/header", {"header": {"config": {"provider": "script", "model": "demo"},
                                             "system": "be brief"}, "reason": "initial" if turn == 1 else "resume"})
    text = ""
    for i in range(deltas):
        piece = f"w{i} "
        text += piece
        log.append("assistant/chunk", {"turn": turn, "step": step,
                                       "chunk": {"type": "text-delta", "index": 0, "text": piece}})
    blocks = [{"type": "text", "text": text}]
    if tool:
        call = {"type": "tool-call", "id": f"c{turn}", "name": "read_file", "arguments": json.dumps({"path": "a"})}
        blocks.append(call)
    log.append("assistant/message", {"turn": turn, "step": step, "message": assistant_message(f"a{turn}", blocks),
                                     "usage": {"inputTokens": 10, "outputTokens": deltas}})
    if tool:
        log.append("tool/call", {"turn": turn, "step": step, "callId": f"c{turn}", "name": "read_file",
                                 "arguments": json.dumps({"path": "a"})})
        log.append("tool/result", {"turn": turn, "step": step, "message": tool_result(f"r{turn}", f"c{turn}", "ok")})
    log.append("step/end", {"turn": turn, "step": step})
    if end:
        log.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
