"""Tool results as the session log records them (dsh's ``tool/call`` / ``tool/result`` payloads)."""
from __future__ import annotations

import json
import uuid


def new_id() -> str:
    return str(uuid.uuid4())


def tool_result_message(call_id: str, result: dict) -> dict:
    """The user-role message carrying one call's result (dsh's ``createToolResultMessage``)."""
    return {"id": new_id(), "role": "user", "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "tool-result", "toolCallId": call_id, "content": list(result["content"]),
                         "isError": bool(result.get("isError"))}]}


def tool_call_data(turn: int, step: int, call: dict) -> dict:
    arguments = call.get("arguments")
    return {"turn": turn, "step": step, "callId": call["id"], "name": str(call.get("name", "")),
            "arguments": arguments if isinstance(arguments, str) else ("" if arguments is None else
                                                                        json.dumps(arguments))}


def tool_result_data(turn: int, step: int, call_id: str, result: dict) -> dict:
    data = {"turn": turn, "step": step, "message": tool_result_message(call_id, result)}
    if isinstance(result.get("error"), dict):
        data["error"] = result["error"]
    if result.get("meta") is not None:
        data["meta"] = result["meta"]
    return data


SKIPPED = {"content": [{"type": "text", "text": "Error: tool call aborted before dispatch"}], "isError": True,
           "error": {"message": "tool call aborted before dispatch", "code": "TOOL_ABORTED_BEFORE_DISPATCH"}}
