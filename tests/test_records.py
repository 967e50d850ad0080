"""``@record`` against ``@dataclass`` (issue 30: the bundles' value classes without the dataclasses
module): classes generated from the same body, with every mix of required, defaulted and factory
fields, frozen or not, compared or not, must construct, fail, compare, hash, show, freeze and turn
into dicts alike."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from dshctl.records import FrozenInstanceError, as_dict, field, record

KINDS = ("required", "default", "factory")
spec = st.lists(st.tuples(st.sampled_from(KINDS), st.booleans(), st.booleans()), max_size=5).map(
    lambda fs: sorted(fs, key=lambda f: f[0] != "required"))   # required fields first, as both need


def body(fields, maker):
    annotations, namespace = {}, {}
    for i, (kind, compare, shown) in enumerate(fields):
        name = f"f{i}"
        annotations[name] = "int"
        if kind == "default":
            namespace[name] = maker(default=i * 10, compare=compare, repr=shown) \
                if not (compare and shown) else i * 10
        elif kind == "factory":
            namespace[name] = maker(default_factory=list, compare=compare, repr=shown)
        elif not (compare and shown):
            namespace[name] = maker(compare=compare, repr=shown)
    namespace["__annotations__"] = annotations
    namespace["__qualname__"] = "Sample"
    return namespace


def both(fields, frozen, eq):
    ref = dataclasses.dataclass(frozen=frozen, eq=eq)(type("Sample", (), body(fields, dataclasses.field)))
    ours = record(frozen=frozen, eq=eq)(type("Sample", (), body(fields, field)))
    return ref, ours


def outcome(make):
    try:
        return ("ok", make())
    except TypeError:
        return ("TypeError", None)


@settings(max_examples=300, deadline=None)
@given(spec, st.booleans(), st.booleans(), st.lists(st.integers(0, 9), max_size=6),
       st.dictionaries(st.sampled_from(["f0", "f1", "f2", "f9"]), st.integers(0, 9), max_size=3))
def test_a_record_behaves_as_the_dataclass_of_the_same_body(fields, frozen, eq, args, kwargs):
    ref, ours = both(fields, frozen, eq)
    (r_how, r), (o_how, o) = outcome(lambda: ref(*args, **kwargs)), outcome(lambda: ours(*args, **kwargs))
    assert r_how == o_how
    if r is None:
        return
    names = [f"f{i}" for i in range(len(fields))]
    assert [getattr(o, n) for n in names] == [getattr(r, n) for n in names]
    assert repr(o) == repr(r)
    assert as_dict(o) == dataclasses.asdict(r)
    twin_r, twin_o = ref(*args, **kwargs), ours(*args, **kwargs)
    assert (o == twin_o) == (r == twin_r)
    assert (ref.__hash__ is None) == (ours.__hash__ is None)
    if frozen and eq:
        assert outcome(lambda: hash(o)) == outcome(lambda: hash(r))   # a list field: unhashable in both
    for n in names[:1]:
        if frozen:
            with pytest.raises(FrozenInstanceError):
                setattr(o, n, 99)
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(r, n, 99)
        else:
            setattr(o, n, 99)
            assert getattr(o, n) == 99


def test_a_factory_default_is_made_for_each_instance():
    @record
    class Bag:
        items: list = field(default_factory=list)

    a, b = Bag(), Bag()
    a.items.append(1)
    assert b.items == [] and Bag([2]).items == [2]


def test_a_mutable_default_is_refused_as_dataclasses_refuse_it():
    with pytest.raises(ValueError, match="use default_factory"):
        @record
        class Bad:
            items: list = []   # noqa: RUF012


def test_a_required_field_after_a_defaulted_one_is_refused():
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        @record
        class Bad:
            a: int = 1
            b: int


def test_records_nest_in_as_dict_and_a_cycle_shows_as_dots():
    @record(eq=False)
    class Node:
        name: str
        children: list = field(default_factory=list)

    root = Node("root")
    root.children.append(Node("leaf"))
    assert as_dict(root) == {"name": "root", "children": [{"name": "leaf", "children": []}]}
    root.children[0].children.append(root)
    assert repr(root).endswith("Node(name='leaf', children=[...])])")
    assert root != Node("root") and hash(root) != hash(Node("root"))   # identity, as eq=False
