"""The `done` line of `dshctl agent run` names the turn the request ran, even when the next turn (a
loop-runner's continuation, queued the moment the agent is idle) is already streaming."""
from __future__ import annotations

from dshctl.host.agent_ops import turn_summary


def _message(text: str) -> dict:
    return {"type": "assistant/message", "data": {"message": {"content": [{"type": "text", "text": text}]}}}


def test_the_summary_is_the_first_turn_to_end_not_the_one_running_now():
    events = [{"type": "turn/start", "data": {}}, {"type": "user/message", "data": {}},
              _message("thinking"), _message("answer"),
              {"type": "turn/end", "data": {"reason": {"kind": "completed"}}},
              {"type": "turn/start", "data": {}}, _message("round 1 already streaming")]
    assert turn_summary(events) == {"reason": {"kind": "completed"}, "text": "answer"}


def test_a_turn_that_has_not_ended_has_no_reason_yet():
    assert turn_summary([{"type": "turn/start", "data": {}}, _message("partial")]) == {
        "reason": None, "text": "partial"}
