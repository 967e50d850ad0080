"""dsh's patch algorithm: every form, every warning text, JavaScript truthiness, indexing, provenance.

The property tests compare ``apply_patches`` with ``_reference`` below: a deliberately naive model of
dsh's ``applyEntryPatches`` (deep copies, a dict index, no tracking) and of ``--dump-config``'s
provenance (one full re-application per layer prefix, rows compared by JSON text).
"""
from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.core.yaml.dialect import load_yaml
from dshctl.core.yaml.nodes import JsExpr
from dshctl.core.compose.patching import Patch, PatchError, apply_patches


def y(text: str):
    return load_yaml(text, "layer.yml").value


def run(patches_yaml: str, base=None, label="L"):
    return apply_patches(base or [], [(label, p) for p in y(patches_yaml)])


def messages(result):
    return [w.message for w in result.warnings]


# ---------------------------------------------------------------------------------------------
# the forms


def test_root_insert_appends_in_order():
    r = run("- insert: [{id: a, name: A}]\n- insert: [{id: b, name: B}, {id: c, name: C}]\n")
    assert [row["id"] for row in r.rows] == ["a", "b", "c"]
    assert r.warnings == []


def test_override_replaces_config_whole_and_keeps_other_keys():
    r = run("""
- insert: [{id: a, name: A, config: {x: 1, y: 2}, inject: [s]}]
- id: a
  config: {x: 5}
""")
    assert r.rows == [{"id": "a", "name": "A", "config": {"x": 5}, "inject": ["s"]}]


def test_disabled_only_patch_leaves_config_untouched_and_false_reenables():
    r = run("""
- insert: [{id: a, name: A, config: {x: 1}}]
- {id: a, disabled: true}
- {id: a, disabled: false}
""")
    assert r.rows == [{"id": "a", "name": "A", "config": {"x": 1}, "disabled": False}]


def test_insert_into_group_and_non_list_config_becomes_list():
    r = run("""
- insert: [{id: g, name: cordis:group, group: true, config: {not: a list}}]
- id: g
  insert: [{id: c, name: C}]
- {id: c, disabled: true}
""")
    assert r.rows[0]["config"] == [{"id": "c", "name": "C", "disabled": True}]


def test_name_is_a_guard_never_an_assignment():
    r = run("""
- insert: [{id: a, name: A}]
- {id: a, name: A, config: 1}
""")
    assert r.rows == [{"id": "a", "name": "A", "config": 1}]


# ---------------------------------------------------------------------------------------------
# the warnings, with dsh's texts (ids JSON-quoted)


def test_every_warning_text():
    r = run("""
- insert: [{id: a, name: A}]
- {id: missing, disabled: true}
- {disabled: true}
- {id: a, name: B, disabled: true}
- {id: nope, insert: [{id: x, name: X}]}
- {id: a, insert: [{id: x, name: X}]}
- {id: 7, disabled: true}
""")
    assert messages(r) == [
        'patch: entry "missing" not found',
        "patch: id is required for non-insert patches",
        'patch: name mismatch for "a" (expected "A", got "B"), skipping',
        'patch insert: entry "nope" not found',
        'patch insert: entry "a" is not a group',
        "patch: entry 7 not found",
    ]
    assert r.rows == [{"id": "a", "name": "A"}]
    assert all(w.layer == "L" for w in r.warnings)


def test_name_mismatch_against_a_row_without_name_says_undefined():
    r = run("- insert: [{id: a}]\n- {id: a, name: B}\n")
    assert messages(r) == ['patch: name mismatch for "a" (expected undefined, got "B"), skipping']


def test_warning_location_points_at_the_patch():
    r = run("- insert: [{id: a, name: A}]\n- id: zzz\n  disabled: true\n")
    loc = r.warnings[0].loc
    assert (loc.file, loc.line, loc.column) == ("layer.yml", 2, 7)


# ---------------------------------------------------------------------------------------------
# JavaScript truthiness


def test_empty_insert_list_is_still_an_insert():
    # `insert: []` is truthy: not an override, so `disabled` is ignored.
    r = run("- insert: [{id: g, name: G, group: true}]\n- {id: g, insert: [], disabled: true}\n")
    assert r.rows == [{"id": "g", "name": "G", "group": True, "config": []}] and r.warnings == []
    r = run("- insert: [{id: a, name: A}]\n- {id: a, insert: []}\n- {insert: [], name: x}\n")
    assert messages(r) == ['patch insert: entry "a" is not a group']


@pytest.mark.parametrize("falsy, value", [("null", None), ("0", 0), ("false", False), ('""', "")])
def test_falsy_insert_is_an_override_that_drops_the_insert_key(falsy, value):
    # dsh's patcher destructures `const {id, insert, name, ...overrides} = patch`: a falsy `insert` makes
    # the patch an override, and `insert` itself is never assigned to the row.
    r = run(f"- insert: [{{id: a, name: A}}]\n- {{id: a, insert: {falsy}, disabled: true}}\n")
    assert r.rows == [{"id": "a", "name": "A", "disabled": True}]


def test_empty_id_counts_as_missing():
    r = run('- insert: [{id: "", name: A}]\n- {id: "", disabled: true}\n')
    assert messages(r) == ["patch: id is required for non-insert patches"]
    r = run('- {id: "", insert: [{id: b, name: B}]}\n')  # falsy id: a root insert
    assert r.rows == [{"id": "b", "name": "B"}]


def test_empty_name_is_no_guard():
    r = run('- insert: [{id: a, name: A}]\n- {id: a, name: "", config: 1}\n')
    assert r.rows[0]["config"] == 1 and r.warnings == []


def test_ids_compare_by_type():
    r = run('- insert: [{id: 7, name: A}, {id: "8", name: B}]\n- {id: "7", x: 1}\n- {id: 8, x: 1}\n'
            "- {id: 7, x: 2}\n")
    assert messages(r) == ['patch: entry "7" not found', "patch: entry 8 not found"]
    assert r.rows[0]["x"] == 2


def test_group_flag_is_truthiness_not_boolean():
    r = run("- insert: [{id: g, name: G, group: 1, config: [{id: c, name: C}]}]\n"
            "- {id: c, x: 1}\n- {id: g, insert: [{id: d, name: D}]}\n")
    assert r.warnings == [] and r.rows[0]["config"][0]["x"] == 1


def test_string_insert_spreads_characters_like_javascript():
    r = run("- {insert: ab}\n")
    assert r.rows == ["a", "b"]


def test_non_iterable_insert_fails_like_dsh():
    with pytest.raises(PatchError):
        run("- {insert: 5}\n")
    with pytest.raises(PatchError):
        run("- {insert: [null]}\n")


# ---------------------------------------------------------------------------------------------
# the index


def test_inserted_rows_and_nested_children_are_indexed_for_later_layers():
    layer1 = y("- insert: [{id: g, name: G, group: true, config: [{id: c, name: C, group: true, "
               "config: [{id: deep, name: D}]}]}]\n")
    layer2 = y("- {id: deep, disabled: true}\n- {id: c, insert: [{id: e, name: E}]}\n- {id: e, x: 1}\n")
    r = apply_patches([], [Patch(p, "one", 0) for p in layer1] + [Patch(p, "two", 1) for p in layer2])
    assert r.warnings == []
    inner = r.rows[0]["config"][0]["config"]
    assert inner == [{"id": "deep", "name": "D", "disabled": True}, {"id": "e", "name": "E", "x": 1}]


def test_children_a_config_override_introduces_are_not_indexed():
    r = run("""
- insert: [{id: g, name: G, group: true, config: []}]
- {id: g, config: [{id: fresh, name: F}]}
- {id: fresh, disabled: true}
""")
    assert messages(r) == ['patch: entry "fresh" not found']


def test_last_occurrence_of_an_id_wins_in_the_index():
    base = y("- {id: a, name: A1}\n- {id: a, name: A2}\n")
    r = apply_patches(base, [("L", p) for p in y("- {id: a, x: 1}\n")])
    assert r.rows == [{"id": "a", "name": "A1"}, {"id": "a", "name": "A2", "x": 1}]


def test_a_later_bundle_row_is_not_visible_to_an_earlier_patch():
    r = run("- {id: late, x: 1}\n- insert: [{id: late, name: L}]\n")
    assert messages(r) == ['patch: entry "late" not found']


# ---------------------------------------------------------------------------------------------
# purity


def test_inputs_are_never_modified():
    base = y("- {id: a, name: A, config: {x: 1}}\n")
    patches = y("- insert: [{id: b, name: B}]\n- {id: b, x: 1}\n- {id: a, config: 2}\n")
    before = (copy.deepcopy(base), copy.deepcopy(patches))
    r1 = apply_patches(base, [("L", p) for p in patches])
    r2 = apply_patches(base, [("L", p) for p in patches])
    assert (base, patches) == before
    assert r1.rows == r2.rows == [{"id": "a", "name": "A", "config": 2}, {"id": "b", "name": "B", "x": 1}]


def test_yaml_aliases_stay_shared_as_with_structured_clone():
    r = run("- insert: [&r {id: a, name: A}, *r]\n- {id: a, x: 1}\n")
    assert r.rows == [{"id": "a", "name": "A", "x": 1}] * 2


# ---------------------------------------------------------------------------------------------
# dump provenance


def test_provenance_labels_follow_dsh_dump():
    layers = ["- insert: [{id: a, name: A}, {id: b, name: B}]\n",
              "- {id: b, disabled: true}\n- insert: [{id: c, name: C}]\n- {id: c, x: 1}\n",
              "- {id: a, name: A}\n"]  # sets nothing: not a change
    plist = [Patch(p, f"L{i}", i) for i, text in enumerate(layers) for p in y(text)]
    r = apply_patches([], plist)
    assert [s.label for s in r.sources] == ["L0", "L0, patched by L1", "L1"]


# ---------------------------------------------------------------------------------------------
# reference model and properties


def _js_key(v):
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", float(v))
    if isinstance(v, str):
        return ("s", v)
    return ("o", id(v))


def _truthy(v):
    if v is None or v is False or v == "" or (isinstance(v, (int, float)) and not isinstance(v, bool)
                                              and (v == 0 or v != v)):
        return False
    return True


def _q(v, present=True):
    return json.dumps(v, separators=(",", ":")) if present else "undefined"


def _reference_apply(base, patches):
    data = copy.deepcopy(base)
    patches = copy.deepcopy(patches)
    index = {}
    warnings = []

    def build(entries):
        for e in entries:
            if isinstance(e, dict):
                if _truthy(e.get("id")):
                    index[_js_key(e["id"])] = e
                if _truthy(e.get("group")) and isinstance(e.get("config"), list):
                    build(e["config"])

    build(data)
    for label, p in patches:
        pid, ins, name = p.get("id"), p.get("insert"), p.get("name")
        if _truthy(ins):
            if _truthy(pid):
                t = index.get(_js_key(pid))
                if t is None:
                    warnings.append((label, f"patch insert: entry {_q(pid)} not found"))
                    continue
                if not _truthy(t.get("group")):
                    warnings.append((label, f"patch insert: entry {_q(pid)} is not a group"))
                    continue
                if not isinstance(t.get("config"), list):
                    t["config"] = []
                t["config"].extend(ins)
            else:
                data.extend(ins)
            build(ins)
            continue
        if not _truthy(pid):
            warnings.append((label, "patch: id is required for non-insert patches"))
            continue
        t = index.get(_js_key(pid))
        if t is None:
            warnings.append((label, f"patch: entry {_q(pid)} not found"))
            continue
        if _truthy(name) and not (type(name) is type(t.get("name")) and name == t.get("name")):
            warnings.append((label, f"patch: name mismatch for {_q(pid)} (expected "
                                    f"{_q(t.get('name'), 'name' in t)}, got {_q(name)}), skipping"))
            continue
        for k, v in p.items():
            if k not in ("id", "name", "insert"):
                t[k] = v
    return data, warnings


def _reference_sources(base, layers):
    """dsh's --dump-config: re-apply each layer prefix, diff top-level rows by JSON text."""
    sources = [["cordis.yml", []] for _ in base]
    previous = base
    for k in range(1, len(layers) + 1):
        flat = [(lab, p) for lab, ps in layers[:k] for p in ps]
        rows, _ = _reference_apply(base, flat)
        before = [json.dumps(r) for r in previous]
        for i, row in enumerate(rows):
            if i >= len(before):
                sources.append([layers[k - 1][0], []])
            elif json.dumps(row) != before[i]:
                sources[i][1].append(layers[k - 1][0])
        previous = rows
    return [o + (", patched by " + ", ".join(p) if p else "") for o, p in sources]


IDS = st.sampled_from(["a", "b", "g", "h", "", 7, "7", True])
NAMES = st.sampled_from(["A", "B", "", None, 3])
SCALARS = st.one_of(st.integers(-2, 2), st.booleans(), st.none(), st.sampled_from(["x", ""]))


def _row(children):
    return st.fixed_dictionaries(
        {"name": NAMES},
        optional={"id": IDS, "group": st.sampled_from([True, False, 1, 0, None]),
                  "config": st.one_of(SCALARS, st.dictionaries(st.sampled_from(["p", "q"]), SCALARS,
                                                               max_size=2), children),
                  "disabled": st.booleans()})


# st.builds(list): a fresh [] per draw. st.just([]) would share one list object, i.e. a YAML alias,
# and aliases that form cycles are refused (test_alias_cycles_are_refused_not_a_stack_overflow).
ROWS = st.recursive(st.builds(list), lambda children: st.lists(_row(children), max_size=3), max_leaves=8)
PATCH = st.fixed_dictionaries(
    {}, optional={"id": IDS, "name": NAMES, "insert": st.one_of(ROWS, st.sampled_from([None, 0, False, ""])),
                  "config": st.one_of(SCALARS, ROWS), "disabled": st.one_of(st.booleans(), st.none()),
                  "group": st.sampled_from([True, False]), "extra": SCALARS})
LAYERS = st.lists(st.tuples(st.sampled_from(["b1", "b2", "user", "home"]), st.lists(PATCH, max_size=5)),
                  max_size=4)


@settings(max_examples=400, deadline=None)
@given(base=ROWS, layers=LAYERS)
def test_matches_reference_model(base, layers):
    flat = [(label, p) for label, ps in layers for p in ps]
    plist = [Patch(p, label, i) for i, (label, ps) in enumerate(layers) for p in ps]
    got = apply_patches(base, plist)
    want_rows, want_warnings = _reference_apply(base, flat)
    assert json.dumps(got.rows) == json.dumps(want_rows)
    assert [(w.layer, w.message) for w in got.warnings] == want_warnings
    assert [s.label for s in got.sources] == _reference_sources(base, layers)


@settings(max_examples=150, deadline=None)
@given(base=ROWS, layers=LAYERS)
def test_application_is_deterministic_and_pure(base, layers):
    plist = [Patch(p, label, i) for i, (label, ps) in enumerate(layers) for p in ps]
    snapshot = json.dumps([base, [p.value for p in plist]])
    first = apply_patches(base, plist)
    second = apply_patches(base, plist)
    assert json.dumps([base, [p.value for p in plist]]) == snapshot
    assert json.dumps(first.rows) == json.dumps(second.rows)


@settings(max_examples=150, deadline=None)
@given(layers=LAYERS)
def test_splitting_layers_never_changes_rows_or_warnings(layers):
    """The pass is single: how patches are grouped into layers affects only labels."""
    flat = [p for _, ps in layers for p in ps]
    whole = apply_patches([], [Patch(p, "one", 0) for p in flat])
    split = apply_patches([], [Patch(p, label, i) for i, (label, ps) in enumerate(layers) for p in ps])
    assert json.dumps(whole.rows) == json.dumps(split.rows)
    assert [w.message for w in whole.warnings] == [w.message for w in split.warnings]


def test_nan_id_is_falsy_as_in_javascript():
    base = [{"id": math.nan, "name": "N"}]
    r = apply_patches(base, [("L", {"id": math.nan, "x": 1})])
    assert "x" not in r.rows[0]
    assert messages(r) == ["patch: id is required for non-insert patches"]


def test_float_and_int_ids_are_one_javascript_number():
    r = apply_patches([{"id": 1, "name": "N"}], [("L", {"id": 1.0, "x": 1})])
    assert r.rows[0]["x"] == 1 and r.warnings == []


def test_js_expr_values_pass_through_untouched():
    r = run("- insert: [{id: a, name: A, config: {p: !!js env.P}}]\n- {id: a, disabled: !!js x > 1}\n")
    assert r.rows[0]["config"]["p"] == JsExpr("env.P") and r.rows[0]["disabled"] == JsExpr("x > 1")


def test_layer_tuples_are_accepted_and_labelled():
    layers = [("b1", y("- insert: [{id: a, name: A}]\n")), ("user", y("- {id: zz, x: 1}\n- {id: a, x: 1}\n"))]
    r = apply_patches([], layers)
    assert r.rows == [{"id": "a", "name": "A", "x": 1}]
    assert [(w.layer, w.message) for w in r.warnings] == [("user", 'patch: entry "zz" not found')]
    assert [s.label for s in r.sources] == ["b1, patched by user"]


def test_js_expr_names_compare_by_identity_like_objects():
    # Two `!!js` nodes with the same text are different objects in JavaScript: the guard fails.
    r = run("- insert: [{id: a, name: !!js pick()}]\n- {id: a, name: !!js pick(), x: 1}\n")
    assert messages(r) == ['patch: name mismatch for "a" (expected {"__jsExpr":"pick()"}, '
                           'got {"__jsExpr":"pick()"}), skipping']
    # One aliased node is one object: the guard passes.
    r = run("- insert: [{id: a, name: &n !!js pick()}]\n- {id: a, name: *n, x: 1}\n")
    assert r.warnings == [] and r.rows[0]["x"] == 1


@pytest.mark.parametrize("value, text", [
    (0.00001, "0.00001"), (1e-6, "0.000001"), (1e-7, "1e-7"), (1.5, "1.5"), (123.0, "123"),
    (1e21, "1e+21"), (1e20, "100000000000000000000"), (12345678901234567890, "12345678901234567000"),
    (-0.0, "0"), (-2.5e-9, "-2.5e-9"), (2**53 + 1, "9007199254740992"), (10**400, "Infinity")])
def test_numbers_print_as_javascript_number_to_string(value, text):
    from dshctl.core.yaml.jsvalue import number_text
    assert number_text(value) == text


def test_float_ids_in_warnings_are_json_stringified_like_javascript():
    r = run("- {id: 0.00001, x: 1}\n- {id: 1.0e-7, x: 1}\n- {id: 2.0, x: 1}\n")
    assert messages(r) == ["patch: entry 0.00001 not found", "patch: entry 1e-7 not found",
                           "patch: entry 2 not found"]


@settings(max_examples=150, deadline=None)
@given(base=ROWS, layers=LAYERS)
def test_skipping_touches_or_tracking_never_changes_rows_warnings_or_origins(base, layers):
    plist = [Patch(p, label, i) for i, (label, ps) in enumerate(layers) for p in ps]
    try:
        full = apply_patches(base, plist)
    except PatchError as err:  # e.g. an alias cycle: every mode must refuse it the same way
        for kwargs in ({"touches": False}, {"track": False}):
            with pytest.raises(PatchError) as again:
                apply_patches(base, plist, **kwargs)
            assert again.value.message == err.message
        return
    lean = apply_patches(base, plist, touches=False)
    bare = apply_patches(base, plist, track=False)
    assert lean.touches == [] and bare.touches == []
    for other in (lean, bare):
        assert json.dumps(other.rows) == json.dumps(full.rows)
        assert [(w.layer, w.message) for w in other.warnings] == [(w.layer, w.message) for w in full.warnings]
        assert [s.origin for s in other.sources] == [s.origin for s in full.sources]
        assert len(other.sources) == len(other.rows)
    assert [s.label for s in lean.sources] == [s.label for s in full.sources]


def test_alias_cycles_are_refused_not_a_stack_overflow():
    # `*c` makes the inserted row's config the group's own config list: inserting the row into the
    # group puts it inside itself. dsh overflows its stack; dshctl says what happened and where.
    shared = "- insert: [{id: g, name: G, group: true, config: &c []}]\n"
    for row in ("{id: r, name: R, group: true, config: *c}", "{id: r, name: R, config: *c}"):
        with pytest.raises(PatchError) as err:
            run(shared + f"- {{id: g, insert: [{row}]}}\n")
        assert "cycle" in err.value.message and err.value.loc is not None


def test_array_index_keys_come_first_as_in_a_javascript_object():
    # js-yaml builds plain objects: "10" and "2" enumerate first, ascending; "02" is not an index.
    r = run("- insert: [{id: a, name: A, config: {b: 1, 10: x, a: 3, 2: y, '02': z}}]\n"
            "- {id: a, zz: 1, 7: seven}\n")
    assert list(r.rows[0]) == ["7", "id", "name", "config", "zz"]
    assert list(r.rows[0]["config"]) == ["2", "10", "b", "a", "02"]


def test_positions_of_the_parsed_input_are_never_changed():
    """Clones share the parsed position tables; an override must not write through to them."""
    layer = y("- insert: [{id: a, name: A, config: {x: 1}}]\n- id: a\n  config: {x: 2}\n")
    row = layer[0]["insert"][0]
    before = (dict(row.value_locs), dict(row.key_locs))
    first = apply_patches([], [("L", p) for p in layer])
    second = apply_patches([], [("L", p) for p in layer])
    assert (dict(row.value_locs), dict(row.key_locs)) == before
    for result in (first, second):
        assert result.rows[0].value_locs["config"].line == 3  # the row reads config from the override
    assert row.value_locs["config"].line == 1


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_number_text_round_trips_and_uses_javascript_layout(value):
    from dshctl.core.yaml.jsvalue import number_text
    text = number_text(value)
    assert float(text) == value
    exponent_form = "e" in text
    magnitude = abs(value)
    assert exponent_form == (magnitude != 0 and (magnitude >= 1e21 or magnitude < 1e-6))


# -- differences from JavaScript found by tests/test_patching_node.py -------------------------------

def test_proto_override_is_not_an_own_key_unless_the_row_has_one():
    # `row.__proto__ = v` in dsh hits Object.prototype's setter: the row's JSON never shows it.
    r = run("""
- insert: [{id: a, name: A}, {id: b, name: B, __proto__: 1}]
- {id: a, __proto__: 5, z: 1}
- {id: b, __proto__: 2}
""")
    assert r.rows == [{"id": "a", "name": "A", "z": 1}, {"id": "b", "name": "B", "__proto__": 2}]
    assert list(r.rows[0]) == ["id", "name", "z"]
