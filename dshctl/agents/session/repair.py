"""Closing a turn a crash left open, with dsh's synthetic closers (``repair.ts``).

Calls the assistant asked for and that have no result get an error ``tool/result`` (outcome unknown
when a ``tool/call`` was recorded, not started otherwise), then the open step gets its ``step/end`` and
the turn a ``turn/end`` with reason ``interrupted``. Seqs continue the log; every closer reuses the
last real event's time, so repair is deterministic. A balanced log needs no closers.
"""
from __future__ import annotations

TOOL_NOT_STARTED = "TOOL_NOT_STARTED"
TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"
_UNKNOWN_TEXT = ("The tool call was interrupted after it was recorded, but no result was durably recorded. "
                 "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
                 "operation is read-only or idempotent; if it may have side effects, first verify external "
                 "state or ask the user. Do not retry blindly.")
_NOT_STARTED_TEXT = ("The tool call was interrupted before the Harness recorded it as started. "
                     "Retry it if it is still needed.")


def _last_reset(events: list[dict]) -> int:
    """Where the fold below may start: the last ``turn/start`` or ``turn/end``, each of which sets its
    whole state, so nothing before it counts (a balanced log ends with one: restoring a long session
    reads a few events, not all of them)."""
    for i in range(len(events) - 1, -1, -1):
        if events[i]["type"] in ("turn/start", "turn/end"):
            return i
    return 0


def _open_tail(events: list[dict]):
    """The open turn, open step and unanswered calls (call id -> [step, tool/call seq or None])."""
    return _fold_tail(events[_last_reset(events):])


def _fold_tail(events: list[dict]):
    open_turn = open_step = None
    pending: dict[str, list] = {}
    for event in events:
        kind, data = event["type"], event["data"]
        if kind == "turn/start":
            open_turn, open_step = data["turn"], None
            pending.clear()
        elif kind == "turn/end":
            open_turn = open_step = None
            pending.clear()
        elif kind == "step/start":
            open_step = data["step"]
        elif kind == "step/end":
            open_step = None
            pending.clear()
        elif kind == "assistant/message":
            for block in data["message"]["content"]:
                if isinstance(block, dict) and block.get("type") == "tool-call" and isinstance(block.get("id"), str):
                    pending[block["id"]] = [data["step"], None]
        elif kind == "tool/call":
            if data["callId"] in pending:
                pending[data["callId"]][1] = event["seq"]
        elif kind == "tool/result":
            pending.pop(data["message"]["source"]["callId"], None)
    return open_turn, open_step, pending


def interrupted_turn_closers(events: list[dict]) -> list[dict]:
    open_turn, open_step, pending = _open_tail(events)
    if open_turn is None or not events:
        return []
    seq = events[-1]["seq"] + 1
    time = events[-1]["time"]
    closers: list[dict] = []
    for call_id, (step, call_seq) in pending.items():
        started = call_seq is not None
        message = {
            "id": f"interrupted-tool-result-{call_id}-{seq}",
            "role": "user",
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "tool-result", "toolCallId": call_id, "isError": True,
                         "content": [{"type": "text", "text": _UNKNOWN_TEXT if started else _NOT_STARTED_TEXT}]}],
        }
        error = ({"name": "ToolOutcomeUnknownError", "code": TOOL_OUTCOME_UNKNOWN} if started
                 else {"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED})
        closer = {"type": "tool/result", "seq": seq, "time": time,
                  "data": {"turn": open_turn, "step": step, "message": message, "error": error},
                  "surfaceOp": "append"}
        if started:
            closer["sourceEventSeqs"] = [call_seq]
        closers.append(closer)
        seq += 1
    if open_step is not None:
        closers.append({"type": "step/end", "seq": seq, "time": time, "data": {"turn": open_turn, "step": open_step}})
        seq += 1
    closers.append({"type": "turn/end", "seq": seq, "time": time,
                    "data": {"turn": open_turn, "reason": {"kind": "interrupted"}}})
    return closers
