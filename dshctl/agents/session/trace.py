"""The running state a log must stay consistent with: turn/step nesting and the ordered surface.

``LogTrace.check(event)`` validates one candidate against the state so far and returns the state it
would leave; ``accept`` commits that state. Validation is pure, so a refused event leaves no trace.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dshctl.agents.session.validate import (
    SURFACE_TYPES, TOOL_NOT_STARTED, TURN_ENCLOSED, EventRejected, _is_seq,
)


class TraceState:
    """Immutable by convention: a transition copies it, so a refused event leaves it as it was."""
    __slots__ = ("open_turn", "open_step", "next_turn", "next_step", "pending_calls")

    def __init__(self, open_turn=None, open_step=None, next_turn=1, next_step=1, pending_calls=frozenset()):
        self.open_turn, self.open_step = open_turn, open_step
        self.next_turn, self.next_step, self.pending_calls = next_turn, next_step, pending_calls

    def copy(self) -> "TraceState":
        return TraceState(self.open_turn, self.open_step, self.next_turn, self.next_step, self.pending_calls)


def _surface_op(event: dict) -> Any:
    kind = event["type"]
    op = event.get("surfaceOp")
    if kind not in SURFACE_TYPES:
        if op is not None:
            raise EventRejected(f'session event "{kind}" is not surface-eligible and cannot carry surfaceOp')
        if event.get("sourceEventSeqs") is not None:
            raise EventRejected(f'session event "{kind}" is not surface-eligible and cannot carry sourceEventSeqs')
        return None
    if op is None:
        raise EventRejected(f'session event "{kind}" is surface-eligible and requires a surfaceOp marker')
    if op == "append":
        return op
    if not (isinstance(op, dict) and set(op) == {"op", "start", "end"} and op["op"] == "replace"
            and _is_seq(op["start"]) and _is_seq(op["end"])):
        raise EventRejected(f'session event "{kind}" carries an invalid surfaceOp')
    return op


def _check_sources(event: dict, shadowed: list[int]) -> None:
    raw = event.get("sourceEventSeqs")
    sources: set[int] = set()
    if raw is not None:
        if not isinstance(raw, list):
            raise EventRejected("sourceEventSeqs must be an array when present")
        if not raw and event["type"] != "assistant/message":
            raise EventRejected("sourceEventSeqs must not be empty except on assistant/message")
        if not all(_is_seq(s) for s in raw):
            raise EventRejected("sourceEventSeqs must hold non-negative integers")
        sources = set(raw)
        if len(sources) != len(raw):
            raise EventRejected("sourceEventSeqs must not contain duplicates")
        later = [s for s in raw if s >= event["seq"]]
        if later:
            raise EventRejected(f"sourceEventSeqs must reference earlier events: {later[0]} >= seq {event['seq']}")
    missing = [s for s in shadowed if s not in sources]
    if missing:
        raise EventRejected("surface replace: sourceEventSeqs must include every shadowed surface node; "
                            f"missing {', '.join(map(str, missing))}")


def _surface_plan(nodes: list[int], event: dict) -> tuple | None:
    """How ``event`` changes the surface: None, ``(lo, hi)`` for a replacement, ``()`` for an append."""
    op = _surface_op(event)
    if op is None:
        return None
    if op == "append":
        _check_sources(event, [])
        return ()
    if op["start"] not in nodes or op["end"] not in nodes:
        raise EventRejected(f"surface replace: seq {op['start'] if op['start'] not in nodes else op['end']} "
                            "is not on the surface")
    lo, hi = nodes.index(op["start"]), nodes.index(op["end"])
    if lo > hi:
        raise EventRejected(f"surface replace: start seq {op['start']} is after end seq {op['end']}")
    _check_sources(event, nodes[lo:hi + 1])
    return (lo, hi)


def _step_event(state: TraceState, kind: str, data: dict) -> None:
    if state.open_turn != data.get("turn") or state.open_step != data.get("step"):
        raise EventRejected(f"{kind} names turn {data.get('turn')}/step {data.get('step')} but open is "
                            f"turn {state.open_turn}/step {state.open_step}")


def _nesting(state: TraceState, event: dict) -> TraceState:
    """dsh's relational session invariants (``invariant.ts``)."""
    kind, data = event["type"], event["data"]
    data = data if isinstance(data, dict) else {}
    if kind in ("assistant/chunk", "assistant/message"):        # the bulk of a log: no state change
        _step_event(state, kind, data)
        return state
    s = state.copy()
    if kind == "turn/start":
        if state.open_turn is not None:
            raise EventRejected(f"turn/start {data.get('turn')} while turn {state.open_turn} is still open")
        if data.get("turn") != state.next_turn:
            raise EventRejected(f"turn/start expected turn {state.next_turn}, got {data.get('turn')}")
        s.open_turn, s.next_step = data["turn"], 1
    elif kind == "turn/end":
        if state.open_turn != data.get("turn"):
            raise EventRejected(f"turn/end {data.get('turn')} does not match open turn {state.open_turn}")
        if state.open_step is not None:
            raise EventRejected(f"turn/end {data.get('turn')} while step {state.open_step} is still open")
        if not isinstance(data.get("reason"), dict) or not isinstance(data["reason"].get("kind"), str):
            raise EventRejected("turn/end needs a reason {kind: ...}")
        s.open_turn, s.next_turn = None, state.next_turn + 1
    elif kind == "step/start":
        if state.open_turn != data.get("turn"):
            raise EventRejected(f"step/start in turn {data.get('turn')} but open turn is {state.open_turn}")
        if state.open_step is not None:
            raise EventRejected(f"step/start {data.get('step')} while step {state.open_step} is still open")
        if data.get("step") != state.next_step:
            raise EventRejected(f"step/start expected step {state.next_step} in turn {data.get('turn')}, "
                                f"got {data.get('step')}")
        s.open_step = data["step"]
    elif kind == "step/end":
        _step_event(state, kind, data)
        s.open_step, s.next_step, s.pending_calls = None, state.next_step + 1, frozenset()
    elif kind == "tool/call":
        _step_event(state, kind, data)
        s.pending_calls = state.pending_calls | {data.get("callId")}
    elif kind == "tool/result":
        _tool_result(state, event, data, s)
    elif kind in TURN_ENCLOSED and state.open_turn is None:
        raise EventRejected(f"{kind} appended outside any open turn")
    else:
        return state
    return s


def _tool_result(state: TraceState, event: dict, data: dict, s: TraceState) -> None:
    if event.get("surfaceOp") != "append":
        if state.open_turn is None:
            raise EventRejected("tool/result surface replacement appended outside any open turn")
        return
    _step_event(state, "tool/result", data)
    call_id = data["message"]["source"]["callId"]
    block = data["message"]["content"][0]
    not_started = block.get("isError") is True and (data.get("error") or {}).get("code") == TOOL_NOT_STARTED
    if call_id not in state.pending_calls and not not_started:
        raise EventRejected(f"tool/result for {call_id} with no prior tool/call in this step")
    s.pending_calls = state.pending_calls - {call_id}


@dataclass
class LogTrace:
    """``nested=False`` checks only what reading needs (seq, surface), for logs written elsewhere."""
    state: TraceState = field(default_factory=TraceState)
    surface: list = field(default_factory=list)   # seqs of the model-visible events, in order
    nested: bool = True
    last_seq: int = -1

    def check(self, event: dict) -> tuple:
        seq = event["seq"]
        if seq != self.last_seq + 1:
            raise EventRejected(f"seq must be contiguous: expected {self.last_seq + 1}, got {seq}")
        plan = _surface_plan(self.surface, event)
        state = _nesting(self.state, event) if self.nested else self.state
        return state, plan, seq

    def plain_chunk(self, event: dict) -> bool:
        """Accept a well-formed ``assistant/chunk`` of the open step at once (most of a log); False
        sends anything else, or anything doubtful, through ``check``."""
        if event.get("type") != "assistant/chunk" or len(event) != 4 or event.get("seq") != self.last_seq + 1 \
                or type(event.get("time")) is not int:
            return False
        data = event.get("data")
        if type(data) is not dict or len(data) != 3 or type(data.get("turn")) is not int \
                or type(data.get("step")) is not int:
            return False
        chunk = data.get("chunk")
        if type(chunk) is not dict or type(chunk.get("type")) is not str:
            return False
        state = self.state
        if self.nested and (state.open_step is None or data.get("turn") != state.open_turn
                            or data.get("step") != state.open_step):
            return False
        self.last_seq += 1
        return True

    def accept(self, checked: tuple) -> None:
        self.state, plan, seq = checked
        self.last_seq = seq
        if plan == ():
            self.surface.append(seq)
        elif plan is not None:
            lo, hi = plan
            self.surface[lo:hi + 1] = [seq]
