"""`session show` groups every turn's steps in one pass (issue 30); it must give, for each turn, what
a scan of the whole log for that turn gives (the definition the per-turn version implemented)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.cli.session_view import steps_by_turn

turns = st.one_of(st.integers(0, 3), st.sampled_from([True, 1.0, None, "1", [1]]))
blocks = st.lists(st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(st.text(max_size=3), st.integers())}),
    st.fixed_dictionaries({"type": st.just("tool-call")}), st.just("junk")), max_size=3)
events = st.lists(st.one_of(
    st.fixed_dictionaries({"type": st.just("assistant/message"),
                           "data": st.one_of(st.fixed_dictionaries({"turn": turns, "message": st.fixed_dictionaries(
                               {"content": st.one_of(blocks, st.none())})}), st.just("x"))}),
    st.fixed_dictionaries({"type": st.sampled_from(["user/message", "turn/start"]), "data": st.just({"turn": 1})})),
    max_size=12)


def scan(events, turn):
    out = []
    for event in events:
        data = event.get("data")
        if event.get("type") != "assistant/message" or not isinstance(data, dict) or data.get("turn") != turn:
            continue
        blocks = [b for b in (data.get("message") or {}).get("content") or [] if isinstance(b, dict)]
        text = "".join(b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str))
        out.append((text, sum(1 for b in blocks if b.get("type") == "tool-call")))
    return out


@settings(max_examples=300)
@given(events)
def test_one_pass_equals_a_scan_per_turn(log):
    grouped = steps_by_turn(log)
    for turn in (0, 1, 2, 3):   # summary turns are integers
        assert grouped.get(turn, []) == scan(log, turn)
