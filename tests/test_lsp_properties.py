"""Properties of `dshctl lsp`'s text handling (hypothesis): UTF-16 columns round-trip, and no text or
cursor position makes hover, completion, definition or code actions raise (the buffer is often broken
while someone types). The protocol itself is tested in tests/editors/test_lsp_*.py."""
from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from demo_home import copy_demo_home
from dshctl.lsp import complete, hover, navigate
from dshctl.lsp.diagnostics import publishable
from dshctl.lsp.plugin_schemas import read_module
from dshctl.lsp.positions import from_utf16_column, lines_of, to_utf16_column

PIECES = st.sampled_from(["- ", "id: ", "name: ", "disabled: ", "insert:", "config:", "  ", "    ", "\n", "\n",
                          '"yes"', "true", "'a:b'", "{id: x, name: y}", "[", "]", "#", " # dshctl: disable-line=schema",
                          "!!js process.env.X", "echo-lower", "😀", "é", ":", "agent-presets:", "default: ",
                          "'@dshctl/http'", "host: ", "retry:", "      "])
TEXTS = st.lists(PIECES, max_size=40).map("".join)


@given(st.text(max_size=30), st.integers(min_value=0, max_value=40))
def test_utf16_columns_round_trip(line, column):
    column = min(column, len(line))
    units = to_utf16_column(line, column)
    assert units == len(line[:column].encode("utf-16-le", "surrogatepass")) // 2
    assert from_utf16_column(line, units) == column


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(text=TEXTS, where=st.tuples(st.integers(0, 12), st.integers(0, 40)),
       name=st.sampled_from(["profiles/web/cordis.patch.yml", "cordis.yml", "settings.yaml", "p/preset.yml",
                             "profiles/web/package.json"]))
def test_no_buffer_or_position_makes_a_feature_raise(tmp_path_factory, text, where, name):
    home = HOME.get("home")
    if home is None:
        home = HOME["home"] = copy_demo_home(tmp_path_factory.mktemp("lsp") / "home")
    path = home / name
    lines = lines_of(text)
    line = min(where[0], len(lines) - 1)
    column = min(where[1], len(lines[line]))
    found = publishable(path, text)
    assert all(d["range"]["start"]["character"] <= d["range"]["end"]["character"] for d in found)
    hover.hover(path, text, lines, line, column, found)
    complete.complete(path, text, lines, line, column)
    navigate.definition(path, text, lines, line, column)
    navigate.code_actions(path.as_uri(), lines, found, yaml=not name.endswith(".json"))


HOME: dict[str, Path] = {}

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                    max_leaves=20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.dictionaries(st.text(max_size=6), JSON, max_size=5), base=st.dictionaries(st.text(max_size=6), JSON,
                                                                                        max_size=3))
def test_a_literal_schema_is_read_as_python_evaluates_it(tmp_path_factory, value, base):
    """What the server reads from a plugin file without running it is what importing it would give."""
    import ast

    source = f"BASE = {base!r}\nschema = {{**BASE, **{value!r}, 'n': 4 * 1024 - -1}}\n"
    expected = {}
    exec(compile(ast.parse(source), "<t>", "exec"), {}, expected)
    path = tmp_path_factory.mktemp("schema") / "plugin.py"
    path.write_text(source)
    assert read_module(str(path), path.stat().st_mtime_ns)[1:] == (expected["schema"], True)


def test_the_shipped_plugins_read_statically_equal_their_imported_schemas():
    """Differential: each shipped plugin's file read without running it, against the imported module;
    a schema built from imported names cannot be read statically (None), never read wrongly."""
    import importlib
    import importlib.util

    from dshctl.loader.resolve import SHIPPED_PLUGINS

    readable = 0
    for module_name in SHIPPED_PLUGINS.values():
        origin = importlib.util.find_spec(module_name).origin
        static = read_module(origin, Path(origin).stat().st_mtime_ns)[1]
        if static is not None:
            readable += 1
            assert static == importlib.import_module(module_name).schema, module_name
        else:  # None only where the schema really is computed: its assignment names or calls something
            assert not _literal_schema(Path(origin).read_text()), module_name
    assert readable >= len(SHIPPED_PLUGINS) // 2


def _literal_schema(source: str) -> bool:
    import ast

    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "schema" for t in node.targets):
            return not any(isinstance(n, (ast.Name, ast.Call, ast.Attribute)) for n in ast.walk(node.value))
    return False


SCHEMA_KEYS = st.sampled_from(["type", "properties", "enum", "const", "default", "description", "$ref", "anyOf",
                               "oneOf", "allOf", "additionalProperties", "minimum", "required", "items", "x"])
SCHEMAISH = st.recursive(JSON | st.just("#/$defs/a") | st.just("#"),
                         lambda inner: st.dictionaries(SCHEMA_KEYS | st.text(max_size=3), inner, max_size=5)
                         | st.lists(inner, max_size=3), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(schema=st.dictionaries(SCHEMA_KEYS, SCHEMAISH, max_size=6), path=st.lists(st.text(max_size=3), max_size=3))
def test_no_plugin_schema_makes_the_docs_raise(schema, path):
    """A bundle's schema is whatever its author wrote: reading it for hover and completion never raises."""
    from dshctl.lsp import schema_docs as sd
    from dshctl.lsp.plugin_config import yaml_scalar

    schema = {"$defs": {"a": schema}, **schema}
    node = sd.at_path(schema, path)
    for name, prop in sd.properties(node if node is not None else schema, schema).items():
        assert isinstance(sd.describe(str(name), prop, schema), str)
        for value in sd.allowed_values(prop, schema):
            yaml_scalar(value)
