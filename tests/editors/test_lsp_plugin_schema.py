"""Hover and completion from a row's plugin schema, through the protocol on a real `dshctl lsp`.

Two kinds of plugin: dshctl's own (`@dshctl/http`, imported as the host imports it) and a bundle's
Python module installed in the profile's node_modules (read, never run). The expected answers are
taken from the schemas themselves: the shipped module's ``schema`` and the bundle module executed here
by the test (what the host would see), not written down by hand."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from demo_home import copy_demo_home
from dshctl.host.plugins import http as http_plugin
from tests.editors.lsp_client import LspClient

DSHCTL = Path(sys.executable).parent / "dshctl"

TUNER = '''"""``@demo/tuner``: tunes the demo's greeting.

More prose that is not the summary."""
from pathlib import Path

Path(__file__).with_name("RAN").write_text("imported")  # the server must never get here

BASE = {"verbose": {"type": "boolean", "default": False, "description": "log every tune"}}
schema = {
    "type": "object",
    "properties": {
        **BASE,
        "mode": {"enum": ["fast", "gentle", "off"], "default": "gentle", "description": "how hard to tune"},
        "steps": {"type": "integer", "minimum": 1, "maximum": 4 * 4, "default": 3},
        "limits": {"$ref": "#/$defs/limits"},
        "label": {"const": "true"},
    },
    "$defs": {"limits": {"type": "object", "properties": {
        "low": {"type": "number", "description": "lowest pitch"},
        "strict": {"type": ["boolean", "null"]},
    }}},
}


def apply(ctx, config):
    pass
'''


@pytest.fixture
def home(tmp_path) -> Path:
    home = copy_demo_home(tmp_path / "home")
    profile = home / "profiles/web"
    bundle = profile / "node_modules/@demo/tuner"
    bundle.mkdir()
    (bundle / "tuner.py").write_text(TUNER)
    (bundle / "cordis.patch.yml").write_text('- insert:\n    - id: tuned\n      name: "@demo/tuner"\n')
    (bundle / "package.json").write_text(json.dumps({
        "name": "@demo/tuner", "version": "1.0.0", "description": "the package's own words",
        "dsh": {"bundle": {"patch": "cordis.patch.yml"}, "python": {"@demo/tuner": "tuner.py"}}}))
    manifest = json.loads((profile / "package.json").read_text())
    manifest["dsh"]["profile"]["bundles"].append("@demo/tuner")
    (profile / "package.json").write_text(json.dumps(manifest))
    return home


@pytest.fixture
def client(home):
    c = LspClient([str(DSHCTL), "lsp"], {}, home)
    yield c
    c.close()


def tuner_schema(home: Path) -> dict:
    """The schema as the host sees it: the module run (here, by the test, after the server's work)."""
    path = home / "profiles/web/node_modules/@demo/tuner/tuner.py"
    spec = importlib.util.spec_from_file_location("tuner_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.schema


def hover(client, path, line, character) -> str:
    answer = client.at("textDocument/hover", path, line, character)
    assert answer is not None
    return answer["contents"]["value"]


def labels(client, path, line, character) -> list[str]:
    return [i["label"] for i in client.at("textDocument/completion", path, line, character)["items"]]


def test_hover_on_a_bundle_rows_name_and_keys_reads_the_schema_without_running_the_module(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = ("- insert:\n    - id: extra\n      name: \"@demo/tuner\"\n      config:\n        mode: fast\n"
            "        limits:\n          low: 1\n- id: tuned\n  config:\n    steps: 2\n")
    client.open(layer, text)
    on_name = hover(client, layer, 2, len('      name: "@de'))
    assert "**`@demo/tuner`** — tunes the demo's greeting." in on_name and "More prose" not in on_name
    assert not (home / "profiles/web/node_modules/@demo/tuner/RAN").exists()  # never imported
    schema = tuner_schema(home)
    assert "config: " + ", ".join(f"`{k}`" for k in schema["properties"]) in on_name
    on_mode = hover(client, layer, 4, len("        mo"))
    mode = schema["properties"]["mode"]
    assert mode["description"] in on_mode and f"default: `{json.dumps(mode['default'])}`" in on_mode
    assert "one of: " + ", ".join(f"`{json.dumps(v)}`" for v in mode["enum"]) in on_mode
    on_low = hover(client, layer, 6, len("          lo"))  # through $ref into the nested mapping
    low = schema["$defs"]["limits"]["properties"]["low"]
    assert on_low.startswith("`limits.low`: number") and low["description"] in on_low
    # a patch entry names no plugin: the composition knows the row `tuned` mounts @demo/tuner
    on_steps = hover(client, layer, 9, len("    st"))
    steps = schema["properties"]["steps"]
    assert on_steps.startswith("`steps`: integer")
    assert f"≥ {steps['minimum']}" in on_steps and f"≤ {steps['maximum']}" in on_steps
    assert "config of `@demo/tuner`" in on_steps and "patches" not in on_steps
    on_id = hover(client, layer, 7, len("- id: tu"))  # the patch entry's row: its layers, then its plugin
    assert "row `tuned` in profile `web`:" in on_id and "**`@demo/tuner`** — tunes the demo's greeting." in on_id
    assert on_id.index("row `tuned`") < on_id.index("**`@demo/tuner`**")


def test_hover_on_a_shipped_plugins_key_shows_type_default_and_bounds(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = layer.read_text()
    lines = text.split("\n")
    client.open(layer)
    port_line = next(n for n, ln in enumerate(lines) if ln.strip().startswith("port:"))
    shown = hover(client, layer, port_line, lines[port_line].index("port") + 1)
    port = http_plugin.schema["properties"]["port"]
    assert shown.startswith(f"`port`: {port['type']}")
    assert f"default: `{port['default']}`" in shown
    assert f"≥ {port['minimum']}" in shown and f"≤ {port['maximum']}" in shown
    host_line = next(n for n, ln in enumerate(lines) if ln.strip().startswith("host:"))
    shown = hover(client, layer, host_line, lines[host_line].index("host") + 1)
    assert "one of: " + ", ".join(f"`{json.dumps(v)}`" for v in http_plugin.schema["properties"]["host"]["enum"]) \
        in shown


def test_completion_offers_the_config_keys_not_written_yet(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = "- id: http\n  config:\n    port: 9090\n    \n"
    client.open(layer, text)
    items = client.at("textDocument/completion", layer, 3, 4)["items"]
    expected = [k for k in http_plugin.schema["properties"] if k != "port"]
    assert [i["label"] for i in items] == expected
    host = next(i for i in items if i["label"] == "host")
    assert host["insertText"] == "host: " and "`\"127.0.0.1\"`" in host["documentation"]["value"]
    # under a nested key, its own properties (the schema's $ref followed)
    text = "- id: tuned\n  config:\n    limits:\n      low: 1\n      \n"
    client.change(layer, 2, [{"text": text}])
    schema = tuner_schema(home)
    assert labels(client, layer, 4, 6) == [k for k in schema["$defs"]["limits"]["properties"] if k != "low"]


def test_completion_offers_the_values_a_key_allows(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = ("- id: http\n  config:\n    host: \n- id: tuned\n  config:\n    mode: \n    verbose: \n"
            "    label: \n    limits:\n      strict: \n    steps: \n")
    client.open(layer, text)
    assert labels(client, layer, 2, len("    host: ")) == http_plugin.schema["properties"]["host"]["enum"]
    schema = tuner_schema(home)
    assert labels(client, layer, 5, len("    mode: ")) == schema["properties"]["mode"]["enum"]
    assert labels(client, layer, 6, len("    verbose: ")) == ["true", "false"]
    assert labels(client, layer, 7, len("    label: ")) == ['"true"']  # plain, it would read as a boolean
    assert labels(client, layer, 9, len("      strict: ")) == ["true", "false"]
    assert labels(client, layer, 10, len("    steps: ")) == []  # an integer: nothing to list


def test_a_completed_value_reads_back_as_the_schemas_value(client, home):
    """What completion inserts, typed into the buffer, is what the schema allows: lint stays clean and
    dsh's YAML reads the schema's value (a string stays a string)."""
    from dshctl.core.yaml.dialect import load_yaml

    layer = home / "profiles/web/cordis.patch.yml"
    text = "- id: tuned\n  config:\n    label: \n"
    client.open(layer, text)
    (label,) = labels(client, layer, 2, len("    label: "))
    typed = text.replace("label: ", f"label: {label}")
    assert client.change(layer, 2, [{"text": typed}]) == []
    assert load_yaml(typed, "t").value[0]["config"]["label"] == tuner_schema(home)["properties"]["label"]["const"]


def test_hover_says_why_a_plugin_shows_no_config_keys(client, home):
    """Three reasons, each from the files: a Python module that assigns no schema (the demo's echo), one
    whose schema is computed when it runs, and a Node package (no ``dsh.python``)."""
    modules = home / "profiles/web/node_modules/@demo"
    (modules / "tuner/computed.py").write_text('"""Computes its schema."""\nschema = dict(type="object")\n')
    manifest = json.loads((modules / "tuner/package.json").read_text())
    manifest["dsh"]["python"]["@demo/tuner/computed"] = "computed.py"
    (modules / "tuner/package.json").write_text(json.dumps(manifest))
    layer = home / "profiles/web/cordis.patch.yml"
    text = ("- insert:\n    - id: a\n      name: \"@demo/greeter/echo\"\n    - id: b\n"
            "      name: \"@demo/tuner/computed\"\n    - id: c\n      name: \"@demo/assistant\"\n")
    client.open(layer, text)
    spec = importlib.util.spec_from_file_location("echo_under_test", modules / "greeter/echo.py")
    echo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(echo)
    assert not hasattr(echo, "schema") and not hasattr(echo, "Config")
    assert "declares no config schema" in hover(client, layer, 2, 14)
    assert "computed when the module runs" in hover(client, layer, 4, 14)
    node = hover(client, layer, 6, 14)
    assistant = json.loads((modules / "assistant/package.json").read_text())
    assert "python" not in assistant["dsh"] and assistant["description"] in node and "a Node plugin" in node


def test_hover_on_a_key_of_config_written_inline(client, home):
    """``config: {…}`` (3 of the corpus's 334 config rows are written so): the key under the cursor,
    nested ones too, for a row's own name and for a row patched by id from a layer below."""
    layer = home / "profiles/web/cordis.patch.yml"
    text = ('- insert:\n    - {id: extra, name: "@demo/tuner", config: {mode: fast, limits: {low: 1}}}\n'
            "- id: tuned\n  config: {steps: 2, \"verbose\": true}\n")
    client.open(layer, text)
    lines = text.split("\n")
    schema = tuner_schema(home)
    on_mode = hover(client, layer, 1, lines[1].index("mode") + 2)
    assert on_mode.startswith("`mode`: one of") or on_mode.startswith("`mode`"), on_mode
    assert schema["properties"]["mode"]["description"] in on_mode and "config of `@demo/tuner`" in on_mode
    on_low = hover(client, layer, 1, lines[1].index("low") + 1)
    assert on_low.startswith("`limits.low`") and "lowest pitch" in on_low, on_low
    on_steps = hover(client, layer, 3, lines[3].index("steps"))
    assert on_steps.startswith("`steps`") and f"≤ {schema['properties']['steps']['maximum']}" in on_steps
    on_quoted = hover(client, layer, 3, lines[3].index("verbose"))
    assert "log every tune" in on_quoted, on_quoted
    on_value = client.at("textDocument/hover", layer, 3, lines[3].index("2,"))
    assert on_value is None or "`steps`" not in on_value["contents"]["value"]
