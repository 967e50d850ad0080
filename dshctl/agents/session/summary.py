"""A session at a glance, from its events: the turns with their prompts, answers, tool calls and ends.

What ``dshctl session show`` prints; computed from the log alone, like the history the model sees.
"""
from __future__ import annotations

from typing import Any


def _text(blocks: list[dict], kind: str = "text") -> str:
    return "".join(b.get("text", "") for b in blocks if b.get("type") == kind)


def _result_text(message: dict) -> str:
    block = (message.get("content") or [{}])[0]
    return _text(block.get("content") or [])


def _new_turn(number: int) -> dict[str, Any]:
    return {"turn": number, "prompt": "", "answer": "", "reasoning": "", "steps": 0, "tools": [],
            "end": None, "usage": {"inputTokens": 0, "outputTokens": 0}}


def turns(events: list[dict]) -> list[dict[str, Any]]:
    """One entry per turn: ``{turn, prompt, answer, reasoning, steps, tools: [{name, arguments, result,
    isError}], end: <reason> | None (still open), usage}``."""
    out: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    calls: dict[str, dict] = {}
    for event in events:
        kind, data = event["type"], event["data"]
        if kind == "turn/start":
            current = _new_turn(data["turn"])
            out.append(current)
            calls = {}
        elif current is None:
            continue
        elif kind == "user/message" and data.get("source", {}).get("kind") == "user":
            current["prompt"] += ("\n" if current["prompt"] else "") + _text(data.get("content") or [])
        elif kind == "step/start":
            current["steps"] += 1
        elif kind == "assistant/message":
            content = data["message"].get("content") or []
            current["answer"] += _text(content)
            current["reasoning"] += _text(content, "reasoning")
            for key in ("inputTokens", "outputTokens"):
                current["usage"][key] += int((data.get("usage") or {}).get(key, 0))
        elif kind == "tool/call":
            calls[data["callId"]] = {"name": data["name"], "arguments": data["arguments"], "result": None}
            current["tools"].append(calls[data["callId"]])
        elif kind == "tool/result":
            message = data["message"]
            call = calls.get(message["source"]["callId"])
            if call is not None:
                call["result"] = _result_text(message)
                call["isError"] = bool(message["content"][0].get("isError"))
        elif kind == "turn/end":
            current["end"] = data["reason"]
    return out


def describe_reason(reason: dict | None) -> str:
    if reason is None:
        return "open"
    kind = reason.get("kind", "?")
    if kind == "aborted":
        return f"aborted ({(reason.get('reason') or {}).get('kind', '?')})"
    if kind == "error":
        failure = reason.get("error") or {}
        return f"error ({failure.get('code', '?')}: {failure.get('message', '')})"
    return kind
