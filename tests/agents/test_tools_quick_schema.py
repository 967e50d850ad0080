"""The quick argument check (tools/validation.quick_check: the schema compiled by core.schemacheck) against jsonschema's Draft 2020-12 validator: on the
schemas it understands it decides exactly as the validator does; on any other it leaves the decision
to the validator; and the pipeline's messages are still the validator's own."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st
from jsonschema import Draft202012Validator

from dshctl.agents.tools.schemas import TODO_WRITE_PARAMETERS
from dshctl.agents.tools.validation import argument_problem, quick_check

_TYPES = st.sampled_from(["string", "boolean", "null", "object", "array", "number", "integer"])
_BOUND = st.one_of(st.integers(0, 3), st.floats(0, 3, allow_nan=False))


def _schemas():
    leaf = st.fixed_dictionaries({}, optional={
        "type": st.one_of(_TYPES, st.lists(_TYPES, min_size=1, max_size=3)),
        "enum": st.lists(st.sampled_from(["a", "b", "1", ""]), min_size=1, max_size=3),
        "minLength": _BOUND, "maxLength": _BOUND, "minimum": _BOUND, "maximum": _BOUND,
        "minItems": _BOUND, "maxItems": _BOUND, "description": st.just("d"),
        "pattern": st.just("^a")})                                   # not understood: the validator decides
    return st.recursive(st.one_of(leaf, st.booleans()), lambda inner: st.fixed_dictionaries({}, optional={
        "type": _TYPES, "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
        "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True),
        "additionalProperties": inner, "items": inner}), max_leaves=6)


_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.floats(-3, 5, allow_nan=False),
              st.sampled_from([1.0, 2.0, 0.5]), st.sampled_from(["", "a", "b", "1", "abcd"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=4)),
    max_leaves=10)


@settings(max_examples=600, deadline=None)
@given(_schemas(), _VALUES)
def test_it_decides_as_the_validator_does_or_not_at_all(schema, value):
    valid = Draft202012Validator(schema).is_valid(value)
    check = quick_check(schema) if isinstance(schema, dict) else None
    if check is not None:
        assert check(value) == valid


def test_the_pipelines_messages_stay_the_validators():
    assert quick_check(TODO_WRITE_PARAMETERS) is not None
    good = {"todos": [{"content": "x", "status": "pending"}]}
    assert argument_problem(TODO_WRITE_PARAMETERS, good) is None
    bad = {"todos": [{"content": "x", "status": "sleeping"}]}
    expected = next(iter(Draft202012Validator(TODO_WRITE_PARAMETERS).iter_errors(bad)))
    assert argument_problem(TODO_WRITE_PARAMETERS, bad).endswith(expected.message)
