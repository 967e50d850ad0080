"""A batch encoded once as UTF-8 is byte for byte the rows dumped one by one: packed runs, non-ASCII
text, and lone surrogates (escaped in their row only, as ``JSON.stringify`` writes them)."""
from hypothesis import given, settings, strategies as st

from dshctl.agents.session.records import batch_bytes, batch_text

TEXT = st.text(alphabet=st.characters(blacklist_categories=()), max_size=12)   # surrogates included


@st.composite
def batches(draw):
    events, seq = [], 0
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.booleans()):
            chunk = {"type": "text-delta", "index": draw(st.integers(0, 1)), "text": draw(TEXT)}
            data = {"turn": 1, "step": 1, "chunk": chunk}
            events.append({"type": "assistant/chunk", "seq": seq, "time": 1000 + seq, "data": data})
        else:
            data = {"turn": 1, "note": draw(TEXT), "items": draw(st.lists(TEXT, max_size=3))}
            events.append({"type": "custom/x", "seq": seq, "time": 1000 + seq, "data": data, "ignorable": True})
        seq += 1
    return events


@settings(max_examples=300, deadline=None)
@given(batches(), st.booleans())
def test_one_encode_per_batch_equals_the_rows_dumped_one_by_one(events, pack):
    assert batch_bytes(events, pack) == batch_text(events, pack).encode("utf-8")


def test_a_lone_surrogate_is_escaped_and_its_neighbours_stay_unescaped():
    events = [{"type": "custom/x", "seq": 0, "time": 1, "data": {"t": "é\ud800"}},
              {"type": "custom/x", "seq": 1, "time": 2, "data": {"t": "é"}}]
    lines = batch_bytes(events, False).decode("utf-8").splitlines()
    assert "\\ud800" in lines[0] and "\\u00e9" in lines[0] and '"é"' in lines[1]
