"""Resuming a composition from the bundle layers' kept pass (core/compose/resume.py) must give exactly
what the one-pass composition of all layers gives: rows (values, types, key order, positions, which
nodes are one object), warnings (text, order, layer, position) and errors, reload after reload, even
when something writes into the rows handed out in between (the loader's ids, a plugin's config)."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dshctl.core.compose import layers as L
from dshctl.core.compose import resume
from dshctl.core.compose.composition import compose_layers
from dshctl.core.compose.patching import PatchError

from compose_shape import shape, warnings_of  # tests/compose_shape.py

# ---- generated layers, written as YAML text (so every node carries real positions) ----------------


class Js:
    def __init__(self, expr):
        self.expr = expr


class Anchor:
    def __init__(self, name, value):
        self.name, self.value = name, value


class Alias:
    def __init__(self, name):
        self.name = name


def emit(value) -> str:
    if isinstance(value, Anchor):
        return f"&{value.name} {emit(value.value)}"
    if isinstance(value, Alias):
        return f"*{value.name}"
    if isinstance(value, Js):
        return f"!!js {json.dumps(value.expr)}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {emit(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(emit(v) for v in value) + "]"
    return json.dumps(value)


IDS = st.sampled_from(["a", "b", "c", "g", "h", "", 7])
NAMES = st.sampled_from(["A", "B", "", None])
SCALARS = st.one_of(st.integers(-2, 2), st.booleans(), st.none(), st.sampled_from(["x", ""]),
                    st.sampled_from(["true", "1 < 2"]).map(Js))
CONFIG = st.one_of(SCALARS, st.dictionaries(st.sampled_from(["p", "q", "2"]), SCALARS, max_size=3))


def _row(children):
    return st.fixed_dictionaries(
        {"name": NAMES},
        optional={"id": IDS, "group": st.sampled_from([True, False, 1, None]),
                  "config": st.one_of(CONFIG, children), "disabled": st.one_of(st.booleans(), SCALARS),
                  "1": SCALARS})


ROWS = st.recursive(st.builds(list), lambda children: st.lists(_row(children), max_size=3), max_leaves=8)
PATCH = st.fixed_dictionaries(
    {}, optional={"id": IDS, "name": NAMES, "insert": st.one_of(ROWS, st.sampled_from([None, 0, "", 3, "ab"])),
                  "config": st.one_of(CONFIG, ROWS), "disabled": st.one_of(st.booleans(), SCALARS),
                  "group": st.sampled_from([True, False]), "0": SCALARS})
# a bundle layer mostly inserts rows; a user layer mostly overrides them
BUNDLE_PATCH = st.one_of(st.builds(lambda rows: {"insert": rows}, st.lists(_row(ROWS), min_size=1, max_size=3)),
                         PATCH)
ALIASES = st.sampled_from([None] * 9 + ["config", "js", "row"])


def layer_text(patches: list, alias: str | None, ids: tuple) -> str:
    """The layer's YAML; ``alias`` adds two patches sharing one node through a YAML alias."""
    items = list(patches)
    if alias == "config":
        items += [{"id": ids[0], "config": Anchor("s", {"p": 1})}, {"id": ids[1], "config": Alias("s")}]
    elif alias == "js":
        items += [{"id": ids[0], "disabled": Anchor("j", Js("false"))}, {"id": ids[1], "disabled": Alias("j")}]
    elif alias == "row":
        items += [{"insert": [Anchor("r", {"id": "z", "name": "A"})]}, {"id": ids[0], "insert": [Alias("r")]}]
    return "\n".join("- " + emit(p) for p in items) + "\n" if items else "[]\n"


def make_layers(specs, label_of) -> list[L.Layer]:
    out = []
    for number, (patches, alias, ids) in enumerate(specs):
        label = label_of(number)
        path = Path(f"/gen/{label.strip('/').replace('/', '_')}-{number}.yml")
        out.append(L.Layer(label, path, L.BUNDLE, L.parse_patch_text(layer_text(patches, alias, ids), path,
                                                                      "overlay")))
    return out


PAIR = st.tuples(IDS, IDS)
PREFIX = st.lists(st.tuples(st.lists(BUNDLE_PATCH, max_size=5), ALIASES, PAIR), min_size=1, max_size=3)
TAIL = st.lists(st.tuples(st.lists(PATCH, max_size=4), ALIASES, PAIR), max_size=2)
USER_LABELS = ["/home/p/profiles/x/cordis.patch.yml", "/home/p/cordis.patch.yml"]

def one_pass(layers):
    try:
        result = compose_layers(layers, track=False)
    except PatchError as err:
        return ("error", err.message, repr(err.loc), err.hint)
    return shape(result.rows), warnings_of(result.warnings)


def meddle(rows: list, how: int) -> None:
    """What a running tree may do to rows handed to it: the loader writes an id into a row without
    one, a plugin writes into its config."""
    for row in rows:
        if not isinstance(row, dict):
            continue
        if how % 2 == 0 and row.get("id") in (None, ""):
            row["id"] = "assigned"
        config = row.get("config")
        if how % 3 == 0 and isinstance(config, dict):
            config["written"] = True
        elif how % 3 == 1 and isinstance(config, list):
            config.append({"id": "pushed", "name": "A"})


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PREFIX, st.lists(TAIL, min_size=1, max_size=4), st.integers(0, 5))
def test_resumed_composition_equals_the_one_pass_composition(prefix_specs, tails, how):
    prefix = make_layers(prefix_specs, lambda n: f"@b/bundle{n}")
    snap = resume.snapshot(prefix)
    aliased_prefix = any(alias for _, alias, _ in prefix_specs)
    if snap is None:
        # only sharing (a YAML alias) or a prefix that does not compose sends us to the one pass
        assert aliased_prefix or one_pass(prefix)[0] == "error"
        event("one pass: the prefix shares nodes or fails")
        return
    kept = shape(snap.private), shape(list(snap.index.values()))
    for tail_specs in tails:
        tail = make_layers(tail_specs, lambda n: USER_LABELS[n % 2])
        expected = one_pass(prefix + tail)
        try:
            got = resume.resume(snap, tail)
        except PatchError as err:
            assert expected == ("error", err.message, repr(err.loc), err.hint)
            event("resume: the same error")
            continue
        if got is None:
            assert any(alias for _, alias, _ in tail_specs), "resume refused a tail without aliases"
            event("one pass: the tail shares nodes")
            continue
        assert (shape(got.rows), warnings_of(got.warnings)) == expected
        assert all(got.rows[pos] is snap.public[pos] for pos in got.public)
        event(f"resumed: {'some' if got.public else 'no'} rows handed out again, "
              f"{'some' if len(got.public) < len(snap.public) else 'no'} rows copied")
        meddle(got.rows, how)
        assert (shape(snap.private), shape(list(snap.index.values()))) == kept, "the kept pass changed"


def test_rows_no_patch_looks_up_are_handed_out_again_and_a_changed_one_is_replaced():
    prefix = make_layers([([{"insert": [{"id": "a", "name": "A", "config": {"p": 1}},
                                       {"id": "b", "name": "B", "config": {"p": 2}}]}], None, ("a", "b"))],
                         lambda n: "@b/one")
    tail = make_layers([([{"id": "b", "config": {"p": 3}}], None, ("a", "b"))], lambda n: USER_LABELS[0])
    snap = resume.snapshot(prefix)
    first, second = resume.resume(snap, tail), resume.resume(snap, tail)
    assert first.rows[0] is second.rows[0] and first.public == second.public == frozenset({0})
    assert first.rows[1] is not second.rows[1] and second.rows[1]["config"] == {"p": 3}
    first.rows[0]["config"]["p"] = 99            # a plugin writes into its config
    third = resume.resume(snap, tail)
    assert third.rows[0] is not first.rows[0] and third.rows[0]["config"] == {"p": 1}
    assert shape(third.rows) == one_pass(prefix + tail)[0]


def test_a_row_without_an_id_is_never_handed_out_twice():
    """The loader writes a random id into a row without one: that row is copied on every resume."""
    prefix = make_layers([([{"insert": [{"name": "A"}, {"id": "g", "name": "cordis:group", "group": True,
                                                       "config": [{"name": "B"}]}]}], None, ("a", "b"))],
                         lambda n: "@b/one")
    snap = resume.snapshot(prefix)
    first, second = resume.resume(snap, []), resume.resume(snap, [])
    assert first.public == frozenset() and first.rows[0] is not second.rows[0]
    assert first.rows[1]["config"][0] is not second.rows[1]["config"][0]


def test_the_same_file_before_and_after_the_bundles_is_composed_in_one_pass():
    """A node in both the prefix and the tail (one file given twice) is one object in the one-pass
    clone; per-part clones would make it two, so resume declines."""
    prefix = make_layers([([{"insert": [{"id": "a", "name": "A"}]}], None, ("a", "b"))], lambda n: "@b/one")
    tail = [L.Layer("/x.yml", Path("/x.yml"), L.PATCH, prefix[0].patches)]
    assert resume.resume(resume.snapshot(prefix), tail) is None
