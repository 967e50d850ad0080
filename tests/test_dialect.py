"""The entry-list dialect (dsh-config.md §3): typing, stream rules, limits, !!js, JSON."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.core.yaml import dialect, eventtree
from dshctl.core.yaml.dialect import MAX_DEPTH, load_file, load_json, load_yaml
from dshctl.core.yaml.emit import dump
from dshctl.core.yaml.jsvalue import js_number
from dshctl.core.yaml.nodes import JsExpr, YList, YMap
from dshctl.errors import ParseError


def value_of(scalar: str):
    return load_yaml(f"v: {scalar}\n", "t.yml").value["v"]


# dsh-config.md §3, "Plain-scalar typing", row by row.
@pytest.mark.parametrize("text", ["null", "Null", "NULL", "~", ""])
def test_null_row(text):
    assert value_of(text) is None


@pytest.mark.parametrize("text,expected", [
    ("true", True), ("True", True), ("TRUE", True), ("false", False), ("False", False), ("FALSE", False)])
def test_boolean_row(text, expected):
    assert value_of(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("0", 0), ("42", 42), ("-7", -7), ("+7", 7), ("010", 10), ("0b101", 5), ("0o17", 15), ("0x1F", 31),
    ("-0x10", -16)])
def test_integer_row(text, expected):
    v = value_of(text)
    assert v == expected and type(v) is int


@pytest.mark.parametrize("text,expected", [
    ("1.5", 1.5), ("1e3", 1000.0), (".5", 0.5), ("-1.5e-2", -0.015), (".inf", math.inf), ("+.Inf", math.inf),
    ("-.INF", -math.inf)])
def test_float_row(text, expected):
    v = value_of(text)
    assert v == expected and type(v) is float


@pytest.mark.parametrize("text", [".nan", ".NaN", ".NAN"])
def test_nan(text):
    assert math.isnan(value_of(text))


@pytest.mark.parametrize("text", ["yes", "no", "on", "off", "Yes", "2024-01-01", "2001-12-14t21:59:43.10-05:00",
                                  "<<", "1_000", "0o8", "1.2.3", "0x", "y", "n"])
def test_everything_else_is_a_string(text):
    assert value_of(text) == text


def test_standard_tags_work_and_quotes_keep_strings():
    v = load_yaml("- !!str 1\n- !!int '7'\n- !!float 2\n- !!bool 'true'\n- !!null ''\n- '1'\n- \"true\"\n",
                  "t.yml").value
    assert v == ["1", 7, 2.0, True, None, "1", "true"]
    assert type(v[2]) is float


@pytest.mark.parametrize("tag", ["!!timestamp 2024-01-01", "!!binary aGk=", "!custom x", "!!set {a}"])
def test_unknown_tags_are_parse_errors(tag):
    with pytest.raises(ParseError, match="unknown tag"):
        load_yaml(f"- {tag}\n", "t.yml")


def test_bom_is_stripped():
    assert load_yaml("\ufeff- a\n", "t.yml").value == ["a"]


def test_nul_is_refused_with_position():
    with pytest.raises(ParseError) as err:
        load_yaml("- a\n- b\x00c\n", "t.yml")
    assert str(err.value.loc) == "t.yml:2:4" and err.value.message == "null byte is not allowed in input"


def test_duplicate_keys_name_file_line_col():
    with pytest.raises(ParseError) as err:
        load_yaml("- id: a\n  name: x\n  id: b\n", "p/cordis.patch.yml")
    assert err.value.message == "duplicated mapping key"
    assert str(err.value.loc) == "p/cordis.patch.yml:3:3"


def test_keys_are_strings_as_in_javascript():
    with pytest.raises(ParseError, match="duplicated mapping key"):
        load_yaml("{1: a, '1': b}\n", "t.yml")
    assert load_yaml("{1: a, true: b, null: c}\n", "t.yml").value == {"1": "a", "true": "b", "null": "c"}


def test_second_document_is_refused():
    with pytest.raises(ParseError, match="expected a single document") as err:
        load_yaml("- a\n---\n- b\n", "t.yml")
    assert err.value.loc.line == 2


@pytest.mark.parametrize("text", ["", "# only a comment\n", "\n\n"])
def test_empty_stream_is_nothing(text):
    doc = load_yaml(text, "t.yml")
    assert doc.empty and doc.value is None


@pytest.mark.parametrize("text,expr", [
    ("!!js process.env.PORT ?? 3080", "process.env.PORT ?? 3080"),
    ("!!js \"a === 'x' ? 'y' : 'z'\"", "a === 'x' ? 'y' : 'z'"),
    ("!!js 'dshHomePath(''s'')'", "dshHomePath('s')"),
    ("!!js |\n    a +\n    b\n", "a +\nb\n"),
    ("!<tag:yaml.org,2002:js> x", "x"),
])
def test_js_in_any_style(text, expr):
    v = load_yaml(f"- v: {text}\n", "t.yml").value[0]["v"]
    assert v == JsExpr(expr) and v.loc.line == 1 and v.loc.column == 6


def test_js_without_expression_is_an_error():
    # js-yaml's words (dsh's JsExpr type resolves only a string; a bare tag has none)
    with pytest.raises(ParseError, match=r"cannot resolve a node with !<tag:yaml.org,2002:js> explicit tag"):
        load_yaml("- v: !!js\n", "t.yml")
    assert load_yaml("- v: !!js ''\n", "t.yml").value == [{"v": JsExpr("")}]  # a string: accepted


def test_js_on_a_collection_is_an_error():
    with pytest.raises(ParseError, match=r"unknown tag !<tag:yaml.org,2002:js>") as err:
        load_yaml("- v: !!js {a: 1}\n", "t.yml")
    assert err.value.hint and "scalar" in err.value.hint


def test_js_not_known_in_preset_dialect():
    with pytest.raises(ParseError, match="unknown tag"):
        load_yaml("name: !!js x\n", "preset.yml", js=False)


def test_aliases_are_shared():
    v = load_yaml("- &row {id: a, config: {p: 1}}\n- *row\n", "t.yml").value
    assert v[0] == v[1] == {"id": "a", "config": {"p": 1}}


def test_alias_bomb_is_refused():
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    prev = "a"
    for i in range(1, 9):
        name = f"l{i}"
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
        prev = name
    with pytest.raises(ParseError, match="alias bomb"):
        load_yaml("\n".join(lines) + "\n", "bomb.yml")


def test_absurd_nesting_is_refused():
    # js-yaml's limit (maxDepth 100: a path of 100 nodes) and words, checked in Node
    with pytest.raises(ParseError, match=rf"nesting exceeded maxDepth \({MAX_DEPTH}\)"):
        load_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n", "deep.yml")
    with pytest.raises(ParseError, match="nesting exceeded maxDepth"):
        load_yaml("[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1) + "\n", "deep.yml")
    assert load_yaml("[" * (MAX_DEPTH - 2) + "1" + "]" * (MAX_DEPTH - 2) + "\n", "ok.yml").value
    ok = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert load_yaml(ok + "\n", "ok.yml").value is not None


def test_positions_point_at_nodes():
    v = load_yaml("# c\n- id: a\n  config:\n    port: 1\n", "f.yml").value
    assert isinstance(v, YList) and isinstance(v[0], YMap)
    assert str(v.loc_of(0)) == "f.yml:2:3"
    assert str(v[0].key_loc("config")) == "f.yml:3:3"
    assert str(v[0]["config"].loc_of("port")) == "f.yml:4:11"


def test_syntax_error_has_position():
    with pytest.raises(ParseError) as err:
        load_yaml("- id: a\n  name: [unclosed\n", "bad.yml")
    assert err.value.loc.file == "bad.yml" and err.value.loc.line >= 2


def test_json_jsexpr_objects_and_notes():
    doc = load_json('\ufeff{"a": {"__jsExpr": "x ?? 1"}, "b": 1, "b": 2}', "package.json")
    assert doc.value == {"a": JsExpr("x ?? 1"), "b": 2}
    assert [n.rule for n in doc.notes] == ["json-bom", "json-duplicate-key"]
    assert doc.notes[0].severity == "error"


def test_load_file_by_extension_and_bad_utf8(tmp_path):
    (tmp_path / "a.json").write_text('[{"name": "x"}]')
    assert load_file(tmp_path / "a.json").value == [{"name": "x"}]
    bad = tmp_path / "cordis.yml"
    bad.write_bytes(b"- a\n- \xff\n")
    with pytest.raises(ParseError, match="not valid UTF-8") as err:
        load_file(bad)
    assert (err.value.loc.line, err.value.loc.column) == (2, 3)


def test_the_c_parser_falls_back_to_the_yaml_1_2_parser():
    # libyaml rejects these in flow context; js-yaml (and the pure parser) accept them.
    v = load_yaml("- {a: x ?? 1, url: http://x:80/}\n", "t.yml").value
    assert v == [{"a": "x ?? 1", "url": "http://x:80/"}]
    assert eventtree._CParser is not None  # the accelerator is installed here, so the fallback ran


# -- property: load(dump(x)) == x --------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
_scalar = st.one_of(st.none(), st.booleans(), st.integers(), _text,
                    st.floats(allow_nan=False), _text.filter(bool).map(JsExpr))
_tree = st.recursive(_scalar, lambda inner: st.one_of(
    # a mapping with a `__jsExpr` key is a !!js node to js-yaml's dumper (dsh's JsExpr predicate)
    st.lists(inner, max_size=4), st.dictionaries(_text.filter(lambda k: k != "__jsExpr"), inner, max_size=4)),
    max_leaves=20)
_row = st.fixed_dictionaries(
    {"id": _text.filter(bool), "name": _text.filter(bool)},
    optional={"config": _tree, "disabled": st.one_of(st.booleans(), _text.filter(bool).map(JsExpr)),
              "group": st.booleans(), "inject": st.lists(_text, max_size=3)})


@settings(max_examples=300, deadline=None)
@given(st.lists(_row, max_size=4))
def test_load_dump_round_trip(rows):
    # Numbers are written as js-yaml writes the JavaScript double dsh holds (9007199254740993 is
    # ...992 there), so they compare as doubles; everything else reads back exactly.
    assert _as_js(load_yaml(dump(rows), "t.yml").value) == _as_js(rows)


def _as_js(value):
    if isinstance(value, dict):
        return {k: _as_js(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_js(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return js_number(value)
    return value


def test_alias_free_documents_are_not_alias_bombs(monkeypatch):
    monkeypatch.setattr(eventtree, "MAX_EXPANDED_NODES", 50)
    rows = "".join(f"- {{id: r{i}, name: n{i}, config: {{p: {i}}}}}\n" for i in range(40))
    assert len(load_yaml(rows, "big.yml").value) == 40  # ~360 nodes, no alias
    bomb = "- &a {x: [1, 2, 3, 4, 5]}\n" + "- *a\n" * 10  # the 7th expansion of 8 nodes passes 50
    with pytest.raises(ParseError, match="aliases expand to more than 50 nodes") as err:
        load_yaml(bomb, "bomb.yml")
    assert err.value.loc.line == 8 and err.value.hint


def test_absurd_nesting_is_refused_before_parsing_the_rest():
    # libyaml needs ~20 s for the whole of this; the builder must stop at MAX_DEPTH instead.
    import time

    started = time.perf_counter()
    with pytest.raises(ParseError, match="nesting exceeded maxDepth") as err:
        load_yaml("[" * 100_000 + "]" * 100_000 + "\n", "deep.yml")
    assert time.perf_counter() - started < 2
    assert err.value.js_message == f"nesting exceeded maxDepth ({MAX_DEPTH}) (1:{MAX_DEPTH})"  # node agrees


def test_c_parser_failure_after_events_falls_back_cleanly():
    # libyaml rejects the flow mapping on row 3 only after emitting rows 1 and 2.
    v = load_yaml("- a\n- b\n- {u: http://x:80/}\n", "t.yml")
    assert v.value == ["a", "b", {"u": "http://x:80/"}] and v.notes == []


def test_json_nesting_is_refused():
    with pytest.raises(ParseError, match="deeper than 200") as err:
        load_json('{"a": ' + "[" * 10_000 + "]" * 10_000 + "}", "package.json")
    assert err.value.loc.line == 1 and err.value.hint


def test_huge_file_is_refused_before_reading(tmp_path):
    huge = tmp_path / "cordis.yml"
    with huge.open("wb") as f:  # sparse: the size is real, nothing is written
        f.truncate(dialect.MAX_FILE_BYTES + 1)
    with pytest.raises(ParseError, match="the limit is 16,777,216") as err:
        load_file(huge)
    assert err.value.loc.file == str(huge) and err.value.hint


@pytest.mark.parametrize("text,js", [
    ("- *nowhere\n", True), ("- v: !!js {a: 1}\n", True), ("- !!int abc\n", True), ("name: !!js x\n", False),
    ("- !!binary aGk=\n", True), ("- a\n---\n- b\n", True), ("- {a: 1, a: 2}\n", True), ("- v: !!js\n", True),
    ("- [unclosed\n", True), ("- a\x00\n", True)])
def test_every_yaml_error_has_position_and_hint(text, js):
    with pytest.raises(ParseError) as err:
        load_yaml(text, "t.yml", js=js)
    assert err.value.loc.line >= 1 and err.value.hint


@pytest.mark.parametrize("text", ['{"a": tru}', '{"a": 1', '{a: 1}', '{"a" 1}', '[1 2]', '1 2', '"\\x"',
                                  "[" * 300 + "]" * 300])
def test_every_json_error_has_position_and_hint(text):
    with pytest.raises(ParseError) as err:
        load_json(text, "package.json")
    assert err.value.loc.line == 1 and err.value.loc.column >= 1 and err.value.hint


# -- differences from js-yaml found by tests/test_patching_node.py ----------------------------------

@pytest.mark.parametrize("text", ["1e400", "-1e400", "1.5e309", "9" * 400, "-" + "9" * 400,
                                  "0x" + "F" * 300, "0b" + "1" * 1100, "0o" + "7" * 400])
def test_numbers_that_overflow_a_double_stay_strings(text):
    # js-yaml 4.2's int/float types only resolve values Number.isFinite accepts.
    assert value_of(text) == text


def test_numbers_just_inside_a_double_are_numbers():
    assert value_of("1e308") == 1e308
    assert value_of("1e-400") == 0.0  # underflow is finite: a number, as parseFloat gives
    assert value_of("12345678901234567890") == 12345678901234567890


@pytest.mark.parametrize("text", ["!!float 0x1F", "!!float 0o7", "!!float 0b1", "!!float 1e400",
                                  "!!int 1e400", "!!int 0x" + "F" * 300])
def test_explicit_number_tags_follow_js_yaml(text):
    with pytest.raises(ParseError, match="cannot resolve a node with"):
        load_yaml(f"- {text}\n", "t.yml")


def test_explicit_float_tag_still_takes_decimal_integers_and_specials():
    v = load_yaml("- !!float 7\n- !!float -.inf\n- !!float 1e3\n", "t.yml").value
    assert v == [7.0, -math.inf, 1000.0] and all(type(x) is float for x in v)


@pytest.mark.parametrize("text,expected", [
    ("[?x]", ["?x"]), ("{a: ?x}", {"a": "?x"}), ("[?x, ?y: 1]", ["?x", {"?y": 1}]),
    ("[a?, -x, x:y]", ["a?", "-x", "x:y"]), ("{? a}", {"a": None}), ("[? a]", [{"a": None}]),
    ("a: ?x", {"a": "?x"}), ("- ?x\n- -1\n", ["?x", -1]), ("[x ?? y]", ["x ?? y"])])
def test_flow_question_mark_is_an_indicator_only_before_a_space(text, expected):
    # js-yaml 4 (YAML 1.2): `?x` is a plain scalar in flow context too; libyaml and ruamel's
    # scanner read it as an explicit key, which made `[?x]` a mapping and `{a: ?x}` an error.
    assert load_yaml(text, "t.yml").value == expected


@pytest.mark.parametrize("text", ["[-]", "{a: -}", "[a, -, b]", "[?]"])
def test_flow_lone_dash_or_question_mark_is_an_error(text):
    # js-yaml: `-`/`?` before a space or a flow indicator cannot start a plain scalar.
    with pytest.raises(ParseError) as err:
        load_yaml(text, "t.yml")
    assert err.value.loc.line == 1
