"""Differential test: dshctl's emitter writes the bytes js-yaml 4.2.0 writes, under Node.

dsh prints ``--dump-config`` with ``yaml.dump(rows, {schema: JSON_SCHEMA.extend(JsExpr), noRefs: true})``
per provenance group (``groupedDump`` in packages/boot/app-boot). ``tests/node/dump_server.mjs`` runs
exactly that with the real js-yaml; here the same values go to both sides and the texts must be equal:

* every YAML file of the shared corpus, as dshctl loads it;
* every corpus home composition (with stand-in bundles) and the example home, as whole grouped dumps;
* a few thousand hypothesis values built to hit every quoting, folding, escaping and number rule.

One long-lived ``node`` process answers everything (values are batched per request).
"""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import corpus_files
from dshctl.core.compose.composition import compose_profile
from dshctl.core.compose.dump import render_yaml
from dshctl.core.compose.profile import manifest_bundles, read_manifest
from dshctl.core.yaml.dialect import load_yaml
from dshctl.core.yaml.emit import EmitError, dump, dump_metadata, dump_rows
from dshctl.core.yaml.nodes import JsExpr
from dshctl.errors import DshctlError
from profile_helpers import make_bundle
from test_profile_corpus import HOMES
from demo_home import copy_demo_home

REPO = Path(__file__).resolve().parents[1]


def to_wire(value):
    """JSON for the Node side: dsh's in-memory form, with -0/NaN/Infinity spelled out."""
    if isinstance(value, JsExpr):
        return {"__jsExpr": value.expr}
    if isinstance(value, dict):
        return {k: to_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_wire(v) for v in value]
    if isinstance(value, float):
        if value != value:
            return {"$nonfinite": "NaN"}
        if math.isinf(value):
            return {"$nonfinite": "Infinity" if value > 0 else "-Infinity"}
        if value == 0 and math.copysign(1, value) < 0:
            return {"$nonfinite": "-0"}
    return value


def wire(value) -> str:
    return json.dumps(to_wire(value), allow_nan=False)


def ours(value) -> str | dict:
    try:
        return dump(value)
    except EmitError as err:
        return {"error": str(err)}


def assert_same_dumps(dump_oracle, values: list) -> None:
    reply = dump_oracle.request({"values": [wire(v) for v in values]})
    for value, theirs in zip(values, reply["dumps"], strict=True):
        assert ours(value) == theirs, f"value: {value!r}"


# ---------------------------------------------------------------------------------------------
# the corpus


def test_every_corpus_yaml_file_dumps_as_js_yaml_dumps_it(dump_oracle):
    values = []
    for path in corpus_files.yaml_files():
        try:
            values.append(load_yaml(path.read_text(encoding="utf-8"), path).value)
        except DshctlError:
            continue  # broken files are the error tests' business
    assert len(values) > 50
    assert_same_dumps(dump_oracle, values)


def _groups(comp) -> list:
    groups: list = []
    for row, source in zip(comp.rows, comp.provenance.sources):
        if groups and groups[-1][0] == source.label:
            groups[-1][1].append(row)
        else:
            groups.append([source.label, [row]])
    return groups


def _compositions(tmp_path: Path):
    for key, (source, profile) in sorted(HOMES.items()):
        home = tmp_path / key
        shutil.copytree(source, home)
        manifest = home / "profiles" / profile / "package.json"
        roots = tmp_path / f"{key}-roots"
        for name in manifest_bundles(read_manifest(manifest), manifest):
            make_bundle(roots, name, "[]\n")
        yield key, compose_profile(home, profile, bundle_roots=[roots])
    home = tmp_path / "examples-home"
    copy_demo_home(home)
    yield "examples", compose_profile(home, "web")


def test_every_composition_dumps_as_dsh_dump_config_prints_it(dump_oracle, tmp_path):
    seen = 0
    for key, comp in _compositions(tmp_path):
        reply = dump_oracle.request({"groups": wire(_groups(comp))})
        if not comp.rows:  # dsh prints a bare newline; dshctl `[]` (docs/compose.md says why)
            assert (reply["text"], render_yaml(comp)) == ("\n", "[]\n")
            continue
        assert render_yaml(comp) == reply["text"], key
        seen += bool(comp.rows)
    assert seen >= 3  # the jn home's layers are empty lists


# ---------------------------------------------------------------------------------------------
# generated values

_SPECIAL = ["", " ", "-", "- ", "?", ":", ": ", "#", " #", "a #b", "a#b", "a: b", "a:b", ":a", "-a", "?a",
            "'", '"', "\\", "\n", "\n\n", "\r", "\t", "\x00", "\x07", "\x1b", "\x85", "\xa0", "\u2028",
            "\ufeff", "\U0001F600", "\ud800", "&", "*", "!", "|", ">", "%", "@", "`", "=", ",", "[", "]",
            "{", "}", "~", "null", "Null", "true", "False", "yes", "on", "N", "off", "1", "-1", "+1",
            "0x1F", "0o17", "0b101", "0b", "1.5", ".5", "1e5", "1e400", ".inf", "-.Inf", ".NaN", "1:20",
            "1_000", "12:30:45.5", "2024-01-01", "---", "...", "é", "ü"]
_word = st.one_of(st.sampled_from(_SPECIAL), st.text(alphabet="ab xy", min_size=1, max_size=12),
                  st.text(max_size=6))
_line = st.lists(_word, max_size=30).map("".join)
_text = st.one_of(
    _word,
    _line,
    st.lists(_line, max_size=5).map("\n".join),
    st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=9), min_size=8, max_size=40).map(" ".join),
    st.tuples(st.sampled_from(["", " ", "\n", "  x\n"]), st.lists(_line, max_size=4).map("\n".join),
              st.sampled_from(["", "\n", "\n\n", " ", "\n \n"])).map("".join),
)
_number = st.one_of(st.integers(), st.integers(min_value=-2**80, max_value=2**80), st.floats(),
                    st.sampled_from([0.0, -0.0, 1e21, 1e-7, 5e-324, 1.5e300, 2.0**53 + 1, 1e16, 123456.789]),
                    st.integers(min_value=10**300, max_value=10**320))
_scalar = st.one_of(st.none(), st.booleans(), _number, _text, _text.map(JsExpr))
_value = st.recursive(_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_text, inner, max_size=4)), max_leaves=12)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
@given(values=st.lists(_value, min_size=20, max_size=30))
def test_generated_values_dump_to_the_same_bytes(dump_oracle, values):
    assert_same_dumps(dump_oracle, values)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(st.lists(st.fixed_dictionaries(
    {"id": _text, "name": _text},
    optional={"config": st.dictionaries(_text, _value, max_size=4), "inject": st.lists(_text, max_size=3),
              "disabled": st.one_of(st.booleans(), _text.map(JsExpr))}), max_size=4), min_size=5,
    max_size=10))
def test_generated_row_lists_dump_to_the_same_bytes(dump_oracle, batches):
    reply = dump_oracle.request({"values": [wire(rows) for rows in batches]})
    for rows, theirs in zip(batches, reply["dumps"], strict=True):
        assert dump_rows(rows) == theirs


def test_hand_picked_edges(dump_oracle):
    long_words = " ".join(["word"] * 40)
    values = [
        [], {}, [[]], [{}], {"a": []}, {"a": {}}, [[1, [2, []]]], {"a": [{"b": [1]}]},
        -0.0, 1e21, 1e-7, math.nan, math.inf, -math.inf, 5.0, 2**53 + 1, 10**400,
        "y", "yes", "1:2", "0x", "#x", "x#", "a: b", "key:", "x" * 100, long_words, long_words + "\n",
        long_words + "\n\n", "\n" + long_words, " lead\nx", "a\n b\nc", "a\u2028b", "\U0001F600 " * 45,
        {"x" * 1100: 1}, {"1": "a", "b": 2, "0": 3, "4294967295": 4}, JsExpr(""), JsExpr("a: b"),
        JsExpr("x\ny"), {"__jsExpr": "ctx.x"}, [JsExpr("1 + 1"), {"k": JsExpr("#")}],
    ]
    assert_same_dumps(dump_oracle, values)


_date_like = st.sampled_from(["2024-01-01", "2024-1-2 10:00:00", "2001-12-14t21:59:43.10-05:00", "<<", "1e5",
                              "yes", "n", "x" * 120 + " y" * 30, "a: b", "line\nbreak\n"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(st.fixed_dictionaries({}, optional={
    "name": st.one_of(_text, _date_like), "description": st.one_of(_text, _date_like),
    "order": _number}), min_size=10, max_size=10))
def test_preset_metadata_is_written_as_dsh_render_preset_metadata_writes_it(dump_oracle, batch):
    reply = dump_oracle.request({"metadata": [wire(fields) for fields in batch]})
    for fields, theirs in zip(batch, reply["dumps"], strict=True):
        assert dump_metadata(fields) == theirs, fields
