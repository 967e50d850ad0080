"""A session at a glance, from its events: the turns with their prompts, answers, tool calls and ends.

What ``dshctl session show`` prints; computed from the log alone, like the history the model sees.
"""
from __future__ import annotations

from typing import Any


def _text(blocks: list, kind: str = "text") -> str:
    return "".join(b["text"] for b in blocks
                   if isinstance(b, dict) and b.get("type") == kind and isinstance(b.get("text"), str))


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
        elif kind == "user/message" and data["source"]["kind"] == "user":
            current["prompt"] += ("\n" if current["prompt"] else "") + _text(data.get("content") or [])
        elif kind == "step/start":
            current["steps"] += 1
        elif kind == "assistant/message":
            content = data["message"].get("content") or []
            current["answer"] += _text(content)
            current["reasoning"] += _text(content, "reasoning")
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            for key in ("inputTokens", "outputTokens"):
                if type(usage.get(key)) is int:
                    current["usage"][key] += usage[key]
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
    cause = reason.get("reason") if isinstance(reason.get("reason"), dict) else {}
    failure = reason.get("error") if isinstance(reason.get("error"), dict) else {}
    if kind == "aborted":
        return f"aborted ({cause.get('kind', '?')})"
    if kind == "error":
        return f"error ({failure.get('code', '?')}: {failure.get('message', '')})"
    return kind
