"""Differential test: js-yaml's verdict, message and position for broken YAML, against js-yaml in Node.

dsh shows js-yaml's first message line (``bad indentation of a mapping entry (2:8)``) for a broken
composition (preset health) and in boot and reload errors. dshctl's port of js-yaml's loader
(``core/yaml/jsyaml.py``) must give the same verdict and text for every class in ``jsyaml_cases``
and for generated near-YAML; and ``dialect.load_yaml`` must report exactly that message and position
whenever it refuses a text.
"""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.core.yaml import jsyaml
from dshctl.core.yaml.dialect import load_yaml
from dshctl.core.yaml.nodes import to_plain
from dshctl.errors import ParseError
from jsyaml_cases import BROKEN


def _revive(value):
    if isinstance(value, dict):
        if set(value) == {"$nonfinite"}:
            return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf, "-0": -0.0}[value["$nonfinite"]]
        return {k: _revive(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_revive(v) for v in value]
    return value


def canon(value):
    """A comparable form: numbers as doubles (NaN as a marker), -0 apart from 0, dates as their text."""
    if isinstance(value, dict):
        return ("map", [(k, canon(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("seq", [canon(v) for v in value])
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        f = float(value)
        return ("nan",) if f != f else ("num", f, math.copysign(1, f))
    if isinstance(value, jsyaml.JsDate) or value == ("date",):
        return ("date",)
    raise TypeError(type(value))


def js_verdicts(dump_oracle, texts, schema=None):
    request = {"texts": texts} | ({"schema": schema} if schema else {})
    out = []
    for reply in dump_oracle.request(request)["loaded"]:
        if reply["ok"]:
            value = reply.get("value")  # undefined (an empty stream) has no JSON
            out.append(("ok", None if value is None else _revive(json.loads(value))))
        else:
            out.append(("error", reply["error"]))
    return out


def port_verdict(text, schema=jsyaml.ENTRY_LIST):
    try:
        return ("ok", jsyaml.load(text, schema))
    except jsyaml.JsYamlError as err:
        return ("error", err.message)


def _js_dates_as_markers(value):
    """JSON carries a Date as its ISO text; the port keeps a JsDate. Compare only that it is a date."""
    if isinstance(value, str) and len(value) >= 20 and value[4] == "-" and value.endswith("Z") and "T" in value:
        return ("date",)
    if isinstance(value, dict):
        return {k: _js_dates_as_markers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_dates_as_markers(v) for v in value]
    return value


def same(ours, theirs, default=False):
    if ours[0] != theirs[0]:
        return False
    if ours[0] == "error":
        return ours[1] == theirs[1]
    if default:
        return canon(ours[1]) == canon(_js_dates_as_markers(theirs[1]))
    return canon(ours[1]) == canon(theirs[1])


# ---------------------------------------------------------------------------------------------


def test_there_are_at_least_forty_broken_classes():
    assert len({name for name, _ in BROKEN}) == len(BROKEN) >= 40


def test_every_class_gets_js_yamls_verdict_and_text(dump_oracle):
    texts = [text for _, text in BROKEN]
    theirs = js_verdicts(dump_oracle, texts)
    failures = [(name, port_verdict(text), js) for (name, text), js in zip(BROKEN, theirs)
                if not same(port_verdict(text), js)]
    assert failures == []
    assert sum(1 for v in theirs if v[0] == "error") >= 40


@pytest.mark.parametrize("name,text", BROKEN, ids=[n for n, _ in BROKEN])
def test_dialect_reports_js_yamls_message_and_position(name, text):
    expected = jsyaml.first_error(text)
    try:
        doc = load_yaml(text, "c.yml")
    except ParseError as err:
        assert expected is not None, f"dshctl refuses what js-yaml loads: {err.message}"
        assert err.js_message == expected.message
        if expected.line and not expected.reason.startswith("null byte"):  # js-yaml puts a NUL on line 1
            assert err.loc.line == expected.line
        return
    assert expected is None, f"dshctl loads what js-yaml refuses ({expected.message})"
    assert canon(to_plain(doc.value)) == canon(jsyaml.load(text))


# --- generated near-YAML ----------------------------------------------------------------------

_pieces = st.sampled_from([
    "a", "b", "id", "x y", "1", "-1.5", "~", "null", "true", "'q'", "'q''", '"d"', '"\\q"', '"\\x41"', "[", "]",
    "{", "}", ",", ":", ": ", "- ", "-", "? ", "#c", " #c", "&a ", "*a", "*b", "!!js ", "!!str ", "!x ", "!!int ",
    "|", "|-", ">+", "|2", "\n", "\n  ", "\n    ", "\n- ", "\n\t", "\t", " ", "---", "\n---\n", "...", "%YAML 1.2\n",
    "%TAG ! tag:x:\n", "<<: ", "\U0001F600", "\x00", "\x01", "\r\n", "2024-01-01", "@", "`",
])
_texts = st.lists(_pieces, max_size=24).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(_texts, min_size=20, max_size=20))
def test_generated_texts_get_js_yamls_verdict(dump_oracle, batch):
    for text, js in zip(batch, js_verdicts(dump_oracle, batch), strict=True):
        assert same(port_verdict(text), js), repr(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(_texts, min_size=20, max_size=20))
def test_generated_texts_under_the_default_schema(dump_oracle, batch):
    for text, js in zip(batch, js_verdicts(dump_oracle, batch, schema="default"), strict=True):
        assert same(port_verdict(text, jsyaml.DEFAULT), js, default=True), repr(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_texts)
def test_dialect_and_js_yaml_agree_on_generated_texts(text):
    expected = jsyaml.first_error(text)
    try:
        doc = load_yaml(text, "g.yml")
    except ParseError as err:
        assert expected is not None and err.js_message == expected.message
        return
    assert expected is None, expected.message
    assert canon(to_plain(doc.value)) == canon(jsyaml.load(text))


def test_no_broken_class_ends_in_an_internal_error(tmp_path, capsys):
    # lint of each file, and a preset root holding them all: findings or success, never exit 3
    from dshctl.cli.app import main

    root = tmp_path / "presets"
    for index, (name, text) in enumerate(BROKEN):
        preset = root / f"p{index}"
        preset.mkdir(parents=True)
        (preset / "agent.cordis.yml").write_text(text, encoding="utf-8")
        (preset / "preset.yml").write_text(text.replace("- ", "name: ", 1), encoding="utf-8")
        for file in (preset / "agent.cordis.yml", preset / "preset.yml"):
            with pytest.raises(SystemExit) as exc:
                main(["lint", str(file)])
            assert exc.value.code in (0, 1), (name, capsys.readouterr())
    home = tmp_path / "home"
    home.mkdir()
    for command in (["preset", "list", "--format", "json"], ["preset", "lint"]):
        with pytest.raises(SystemExit) as exc:
            main(["--home", str(home), *command, "--root", str(root), "--no-user-root"])
        out = capsys.readouterr()
        assert exc.value.code in (0, 1), (command, out.err)
