"""core/jsontext.py writes indented JSON itself (the C encoder per flat container): its text must be
exactly json.dumps(indent=…)'s, for every value, and fail the same way."""
from __future__ import annotations

import enum
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.core.jsontext import dumps_indented
from dshctl.core.yaml.nodes import YList, YMap


class Level(enum.IntEnum):
    LOW = 1


def _default(o):
    if isinstance(o, set):
        return sorted(o)
    raise TypeError(f"not JSON: {type(o).__name__}")


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=2**64),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(), st.just(Level.LOW),
                    st.sets(st.integers(0, 3), max_size=2))
keys = st.one_of(st.text(max_size=6), st.integers(-3, 3), st.booleans(), st.none(), st.floats(0, 1))
values = st.recursive(scalars, lambda kids: st.one_of(
    st.lists(kids, max_size=4), st.lists(kids, max_size=3).map(tuple),
    st.lists(kids, max_size=3).map(YList),
    st.dictionaries(st.text(max_size=6), kids, max_size=4),
    st.dictionaries(keys, kids, max_size=3),
    st.dictionaries(st.text(max_size=6), kids, max_size=3).map(YMap)), max_leaves=40)


@settings(max_examples=600)
@given(values, st.sampled_from([0, 1, 2, 4]), st.booleans())
def test_same_text_as_json_dumps(value, indent, ensure_ascii):
    expected = json.dumps(value, indent=indent, default=_default, ensure_ascii=ensure_ascii)
    assert dumps_indented(value, indent, default=_default, ensure_ascii=ensure_ascii) == expected


@settings(max_examples=200)
@given(st.lists(st.fixed_dictionaries({"id": st.text(), "order": st.one_of(st.none(), st.integers(), st.floats(
    allow_nan=False, allow_infinity=False)), "shadowed": st.lists(st.text(), max_size=2),
    "broken": st.one_of(st.none(), st.text())}), max_size=5))
def test_preset_list_shape(rows):
    """The shape `preset list -f json` writes: flat objects with a list that is mostly empty."""
    assert dumps_indented(rows, 2) == json.dumps(rows, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("bad", [[1, math.nan], {"a": [math.inf]}, [{"x": -math.inf}], math.nan])
def test_non_finite_numbers_fail_as_json_does(bad):
    with pytest.raises(ValueError):
        json.dumps(bad, indent=2, allow_nan=False)
    with pytest.raises(ValueError):
        dumps_indented(bad, 2, allow_nan=False)
    assert dumps_indented(bad, 2) == json.dumps(bad, indent=2)


def test_cycles_and_unknown_types_fail_as_json_does():
    cyclic: list = [1]
    cyclic.append([cyclic])
    with pytest.raises(ValueError, match="Circular reference"):
        dumps_indented(cyclic, 2)
    with pytest.raises(TypeError):
        dumps_indented([{"a": object()}], 2)
