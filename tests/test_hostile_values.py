"""Issue 14's table, CLI rows: values and names that ended in an internal error (exit 3).

Numbers and strings follow JavaScript (js-yaml, JSON.parse, JSON.stringify): a plain integer of
thousands of digits is a string in js-yaml 4.2 (it is not a finite number), a huge JSON integer is
Infinity (JSON.stringify writes null), a lone surrogate is a valid string that JSON.stringify
escapes. Everything runs as a real `dshctl` process, so stdout is a real UTF-8 pipe.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from dshctl.core.yaml.dialect import load_json, load_yaml
from dshctl.core.yaml.jsvalue import to_json
from demo_home import copy_demo_home

REPO = Path(__file__).resolve().parents[1]
DSHCTL = str(REPO / ".venv" / "bin" / "dshctl")
BIG = "9" * 5000   # past Python's 4,300-digit int-from-text limit


def run(*args: str, home: Path | None = None) -> subprocess.CompletedProcess:
    cmd = [DSHCTL] + (["--home", str(home)] if home else []) + list(args)
    return subprocess.run(cmd, capture_output=True, timeout=60)


def assert_clean(result: subprocess.CompletedProcess, code: int | None = None) -> None:
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode != 3, err
    assert "Traceback" not in err and "internal error" not in err, err
    if code is not None:
        assert result.returncode == code, err


@pytest.fixture
def home(tmp_path) -> Path:
    target = tmp_path / "home"
    copy_demo_home(target)
    return target


def user_layer(home: Path, text: str) -> Path:
    path = home / "profiles" / "web" / "cordis.patch.yml"
    path.write_text(text, encoding="utf-8")
    return path


HTTP_ROW = "- id: http\n  config:\n    host: 127.0.0.1\n    port: 9090\n"

READERS = [("lint", "{layer}"), ("profile", "dump"), ("profile", "dump", "-f", "json"),
           ("profile", "explain", "http"), ("preset", "list"), ("preset", "lint"),
           ("profile", "set", "http.config.port", "5")]


# ---- numbers -----------------------------------------------------------------------------------
def test_a_huge_plain_integer_is_a_string_as_in_js_yaml():
    doc = load_yaml(f"a: {BIG}\nb: -{BIG}\nc: 0x{'f' * 2000}\n", "x.yml")
    assert doc.value == {"a": BIG, "b": "-" + BIG, "c": "0x" + "f" * 2000}


def test_a_huge_tagged_integer_is_a_positioned_error():
    from dshctl.errors import ParseError
    with pytest.raises(ParseError) as info:
        load_yaml(f"a: !!int {BIG}\n", "x.yml")
    # where js-yaml puts an error about a node it cannot construct: just after the scalar
    assert str(info.value.loc) == f"x.yml:1:{4 + len('!!int ') + len(BIG)}"


def test_a_huge_json_integer_is_infinity_as_json_parse_gives():
    doc = load_json(f'{{"a": {BIG}, "b": -{BIG}, "c": 12}}', "x.json")
    assert doc.value["a"] == math.inf and doc.value["b"] == -math.inf and doc.value["c"] == 12
    assert to_json(doc.value) == '{"a":null,"b":null,"c":12}'   # JSON.stringify


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_reading_commands_take_a_huge_integer(home, args):
    layer = user_layer(home, HTTP_ROW + f"    big: {BIG}\n")
    result = run(*[a.format(layer=layer) for a in args], home=home)
    assert_clean(result, 0)
    if "json" in args:
        config = next(r for r in json.loads(result.stdout)["rows"] if r["id"] == "http")["config"]
        assert config["big"] == BIG


def test_a_huge_integer_in_a_json_entry_list_dumps_as_null(home, tmp_path):
    entries = tmp_path / "extra.cordis.json"
    entries.write_text(json.dumps([{"id": "http", "config": {"port": 1}}])
                       .replace('"port": 1', f'"port": 1, "big": {BIG}'))
    result = run("lint", str(entries))
    assert_clean(result)


def test_js_hex_literal_beyond_a_double_is_infinity(home):
    user_layer(home, HTTP_ROW + f"    big: !!js 0x{'f' * 300}\n")
    result = run("profile", "dump", "-f", "json", home=home)
    assert_clean(result, 0)
    from dshctl.core.jsexpr import JsEnv, evaluate, parse
    assert evaluate(parse("0x" + "f" * 300), JsEnv({}, "/", "linux", "/")) == math.inf


# ---- lone surrogates -----------------------------------------------------------------------------
def test_a_lone_surrogate_is_a_valid_string(home):
    assert load_yaml('a: "\\ud800"\n', "x.yml").value == {"a": "\ud800"}
    assert to_json({"a": "\ud800", "\udcff": 1}) == '{"a":"\\ud800","\\udcff":1}'


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_reading_commands_take_a_lone_surrogate(home, args):
    layer = user_layer(home, HTTP_ROW + '    odd: "\\ud800"\n')
    result = run(*[a.format(layer=layer) for a in args], home=home)
    assert_clean(result, 0)
    if "json" in args:   # JSON.stringify's escape, so the output is valid UTF-8 and valid JSON
        assert b'"odd": "\\ud800"' in result.stdout
        config = next(r for r in json.loads(result.stdout)["rows"] if r["id"] == "http")["config"]
        assert config["odd"] == "\ud800"
    if "set" in args:    # the rewritten layer keeps the value, escaped
        assert load_yaml(layer.read_text("utf-8"), layer).value[0]["config"]["odd"] == "\ud800"


def test_argv_that_is_not_utf8_is_a_usage_error(home):
    for args in (["profile", "set", "http.config.q", "\udcff"], ["lint", "\udcff"],
                 ["--profile", "\udcff", "profile", "dump"]):
        result = subprocess.run([DSHCTL, "--home", str(home), *(os.fsencode(a) for a in args)],
                                capture_output=True, timeout=60)
        assert_clean(result, 2)
        assert b"is not valid UTF-8" in result.stderr


# ---- names, paths, homes -------------------------------------------------------------------------
@pytest.mark.parametrize("args", [("profile", "set", "http.config.port", "5"), ("profile", "init", "x"),
                                  ("profile", "dump"), ("plugin", "list"), ("preset", "list"),
                                  ("host", "run", "--for", "1")], ids=lambda a: " ".join(a))
def test_a_home_that_is_a_file_is_one_line(args):
    result = run(*args, home=Path("/dev/null"))
    assert_clean(result, 2)
    assert result.stderr.decode().startswith("dshctl: error: the dsh home /dev/null is not a directory")


LONG = "a" * 300


@pytest.mark.parametrize("args", [("--profile", LONG, "profile", "dump"), ("profile", "init", LONG),
                                  ("--profile", LONG, "status"), ("--profile", LONG, "plugin", "list"),
                                  ("lint", LONG), ("lint", "x/" * 3000)], ids=lambda a: a[0] + "…")
def test_names_and_paths_over_the_limits_are_one_line(home, args):
    result = run(*args, home=home)
    assert_clean(result, 1)
    lines = result.stderr.decode().splitlines()
    assert lines[0].startswith("dshctl: error: ") and lines[1].startswith("  hint: "), lines


def test_a_home_path_component_over_255_bytes_is_one_line(home):
    result = run("profile", "dump", home=home / LONG)
    assert_clean(result, 1)
    assert "name too long" in result.stderr.decode()


# ---- profile set ---------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["http..port", "http.config.", "http.config..port"])
def test_profile_set_refuses_an_empty_key(home, target):
    layer = user_layer(home, HTTP_ROW)
    result = run("profile", "set", target, "5", home=home)
    assert_clean(result, 2)
    assert "empty key" in result.stderr.decode()
    assert layer.read_text() == HTTP_ROW


@pytest.mark.parametrize("value", ["5", "abc", "[1, 2]", "true"])
def test_profile_set_refuses_a_whole_config_that_is_not_a_mapping(home, value):
    layer = user_layer(home, HTTP_ROW)
    result = run("profile", "set", "http.config", value, home=home)
    assert_clean(result, 1)
    assert "http.config must be a mapping" in result.stderr.decode()
    assert layer.read_text() == HTTP_ROW


def test_profile_set_still_takes_a_whole_mapping_config(home):
    layer = user_layer(home, HTTP_ROW)
    result = run("profile", "set", "http.config", "{host: 127.0.0.1, port: 1234}", home=home)
    assert_clean(result, 0)
    assert load_yaml(layer.read_text(), layer).value[0]["config"] == {"host": "127.0.0.1", "port": 1234}


# ---- profile init --from, then install -----------------------------------------------------------
def test_install_after_init_from_never_drops_a_bundle(home):
    assert_clean(run("profile", "init", "work", "--from", "web", home=home), 0)
    manifest = home / "profiles" / "work" / "package.json"
    before = manifest.read_bytes()
    result = run("plugin", "--profile", "work", "install", home=home)
    assert_clean(result, 1)
    err = result.stderr.decode()
    assert "@demo/greeter" in err and "neither installed nor in dshctl.lock.json" in err
    assert manifest.read_bytes() == before
    assert json.loads(before)["dsh"]["profile"]["bundles"] == ["@dshctl/host-base", "@demo/greeter",
                                                                "@demo/assistant"]
