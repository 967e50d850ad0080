"""The closers a restore appends to a turn a crash left open (``repair.py``) start their fold at the
last ``turn/start`` / ``turn/end`` instead of the log's first event; a hypothesis property holds that
fold, and the closers made from it, to the same fold over every event, on logs with open and closed
turns, steps and calls in any order."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from dshctl.agents.session.repair import _fold_tail, _open_tail, interrupted_turn_closers


CALL_IDS = st.sampled_from(["c1", "c2", "c3"])
STEP = st.fixed_dictionaries({"type": st.just("step/start"), "data": st.fixed_dictionaries({"step": st.integers(1, 4)})})
EVENT = st.one_of(
    st.fixed_dictionaries({"type": st.just("turn/start"), "data": st.fixed_dictionaries({"turn": st.integers(1, 9)})}),
    st.fixed_dictionaries({"type": st.just("turn/end"), "data": st.just({"reason": {"kind": "completed"}})}),
    STEP,
    st.fixed_dictionaries({"type": st.just("step/end"), "data": st.just({})}),
    st.builds(lambda ids, step: {"type": "assistant/message", "data": {"step": step, "message": {"content": [
        {"type": "text", "text": "t"}, *({"type": "tool-call", "id": i, "name": "read"} for i in ids)]}}},
        st.lists(CALL_IDS, max_size=3), st.integers(1, 4)),
    st.builds(lambda i: {"type": "tool/call", "data": {"callId": i}}, CALL_IDS),
    st.builds(lambda i: {"type": "tool/result", "data": {"message": {"source": {"kind": "tool", "callId": i}}}},
              CALL_IDS),
    st.fixed_dictionaries({"type": st.just("assistant/chunk"), "data": st.just({"turn": 1, "step": 1})}),
)


def _numbered(events):
    return [{**event, "seq": seq, "time": 1000 + seq} for seq, event in enumerate(events)]


@settings(max_examples=400, deadline=None)
@given(st.lists(EVENT, max_size=40))
def test_the_closers_match_a_fold_over_every_event(raw):
    events = _numbered(raw)
    open_turn, open_step, pending = _fold_tail(events)       # the fold from the first event
    assert _open_tail(events) == (open_turn, open_step, pending)
    closers = interrupted_turn_closers(events)
    if open_turn is None or not events:
        assert closers == []
        return
    results = [c for c in closers if c["type"] == "tool/result"]
    assert [c["data"]["message"]["source"]["callId"] for c in results] == list(pending)
    assert [c["data"]["step"] for c in results] == [step for step, _ in pending.values()]
    assert [c.get("sourceEventSeqs") for c in results] == [None if s is None else [s] for _, s in pending.values()]
    ends = [c for c in closers if c["type"] != "tool/result"]
    assert [c["type"] for c in ends] == (["step/end"] if open_step is not None else []) + ["turn/end"]
    assert all(c["data"]["turn"] == open_turn for c in closers)
    assert [c["seq"] for c in closers] == list(range(len(events), len(events) + len(closers)))


def test_a_closed_turn_ten_thousand_events_long_needs_no_closers_and_an_open_one_gets_them():
    turn = [{"type": "turn/start", "data": {"turn": 1}}, {"type": "step/start", "data": {"step": 1}},
            *({"type": "assistant/chunk", "data": {"turn": 1, "step": 1}} for _ in range(10_000)),
            {"type": "assistant/message", "data": {"step": 1, "message": {"content": [
                {"type": "tool-call", "id": "c1", "name": "read"}]}}},
            {"type": "tool/call", "data": {"callId": "c1"}}]
    open_log = _numbered(turn)
    assert [c["type"] for c in interrupted_turn_closers(open_log)] == ["tool/result", "step/end", "turn/end"]
    closed = _numbered(turn + [{"type": "step/end", "data": {}}, {"type": "turn/end", "data": {"reason": {}}}])
    assert interrupted_turn_closers(closed) == []
