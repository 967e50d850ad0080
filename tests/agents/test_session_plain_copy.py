"""``plain_copy`` (the session log's one-walk copy of an event's data) against what it replaced: the JSON
round trip ``json.loads(dumps(v))`` for a value ``json_problem`` accepts, and ``json_problem``'s refusal
for any other value."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from dshctl.agents.session.records import dumps
from dshctl.agents.session.validate import NotPlain, json_problem, plain_copy


class Tagged(str):
    pass


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.text(max_size=6),
                     st.floats(allow_nan=True, allow_infinity=True), st.builds(Tagged, st.text(max_size=3)),
                     st.sampled_from([(1, 2), b"x", {1, 2}, -0.0, 0.0]))
_KEYS = st.one_of(st.text(max_size=4), st.integers(0, 3), st.builds(Tagged, st.text(max_size=2)))
VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_plain_copy_is_the_json_round_trip_or_json_problems_refusal(value):
    problem = json_problem(value)
    if problem is None:
        copied = plain_copy(value)
        assert copied == json.loads(dumps(value))
        assert dumps(copied) == dumps(value)
        if isinstance(value, (dict, list)):
            assert copied is not value          # the log keeps its own copy
    else:
        with pytest.raises(NotPlain) as caught:
            plain_copy(value)
        assert str(caught.value) == problem


def test_shared_and_cyclic_references_are_refused_as_before():
    shared = [1]
    with pytest.raises(NotPlain, match="repeated or cyclic"):
        plain_copy({"a": shared, "b": shared})
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(NotPlain, match="repeated or cyclic"):
        plain_copy(cyclic)
    with pytest.raises(NotPlain, match=r"data\.x is -0\.0"):
        plain_copy({"x": -0.0})
    assert math.copysign(1.0, plain_copy({"x": 0.0})["x"]) == 1.0


_CHUNKS = st.fixed_dictionaries({"turn": st.one_of(st.integers(0, 3), st.booleans(), st.just(1.0)),
                                 "step": st.integers(0, 3),
                                 "chunk": st.one_of(st.dictionaries(st.sampled_from(["type", "index", "text", "id"]),
                                                                    _SCALARS, max_size=4),
                                                    st.just([1]))},
                                optional={"extra": st.integers()})


@settings(max_examples=400, deadline=None)
@given(_CHUNKS)
def test_the_chunk_fast_path_builds_what_build_event_builds(data):
    from dshctl.agents.session.log import _plain_chunk_event, build_event
    from dshctl.agents.session.validate import EventRejected
    fast = _plain_chunk_event(data, 7, 1000)
    try:
        full = build_event("assistant/chunk", data, 7, 1000, {})
    except EventRejected:
        full = None
    if fast is not None:
        assert fast == full and dumps(fast) == dumps(full)
        assert fast["data"]["chunk"] is not data["chunk"]
