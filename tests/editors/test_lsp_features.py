"""Hover, completion, definition and code actions of `dshctl lsp`, through the protocol on a real
`dshctl lsp` process, in a copy of the demo home (profile web: host-base, @demo/greeter,
@demo/assistant, then the profile's own cordis.patch.yml). What the answers must contain is taken
from `dshctl profile explain --format json` and the files themselves, not written down by hand."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from demo_home import copy_demo_home
from tests.editors.lsp_client import LspClient

DSHCTL = Path(sys.executable).parent / "dshctl"


@pytest.fixture
def home(tmp_path) -> Path:
    return copy_demo_home(tmp_path / "home")


@pytest.fixture
def client(home):
    c = LspClient([str(DSHCTL), "lsp"], {}, home)
    yield c
    c.close()


def explain(home: Path, target: str) -> dict:
    proc = subprocess.run([str(DSHCTL), "--home", str(home), "profile", "explain", target, "-f", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def line_of(text: str, needle: str) -> int:
    return text.split("\n").index(next(ln for ln in text.split("\n") if needle in ln))


def hover_text(client: LspClient, path: Path, line: int, character: int) -> str:
    answer = client.at("textDocument/hover", path, line, character)
    assert answer is not None
    assert answer["contents"]["kind"] == "markdown"
    return answer["contents"]["value"]


def test_hover_on_a_row_id_names_every_layer_that_touched_it(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = layer.read_text()
    client.open(layer)
    line = line_of(text, "- id: echo-lower")
    shown = hover_text(client, layer, line, len("- id: echo"))
    steps = explain(home, "echo-lower")["steps"]
    assert len(steps) >= 2
    for step in steps:  # each layer, with where it did it
        assert f"`{step['layer']}` {step['message']}" in shown
        assert f"{step['file']}:{step['line']}:{step['column']}" in shown
    assert f"`disabled` from `{steps[-1]['layer']}`" in shown and "state: disabled by" in shown


def test_hover_follows_the_unsaved_buffer(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = layer.read_text().replace("- id: echo-lower\n  disabled: true\n", "- id: echo-lower\n  disabled: false\n")
    client.open(layer, text)
    shown = hover_text(client, layer, line_of(text, "- id: echo-lower"), 7)
    assert "state: enabled" in shown  # on disk the row is disabled


def test_hover_on_a_disabled_string_says_how_dsh_reads_it(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = layer.read_text().replace("disabled: true", 'disabled: "false"')
    (diag,) = client.open(layer, text)
    line = line_of(text, 'disabled: "false"')
    shown = hover_text(client, layer, line, text.split("\n")[line].index('"false"') + 2)
    assert 'the string "false": it disables the row' in shown
    assert f"**schema**: {diag['message']}" in shown and diag["data"]["hint"] in shown
    key = hover_text(client, layer, line, 4)
    schema = json.loads(subprocess.run([str(DSHCTL), "schema", "show", "cordis.patch"], capture_output=True,
                                       text=True, timeout=60).stdout)
    assert schema["$defs"]["override"]["properties"]["disabled"]["description"] in key


def test_completion_of_ids_offers_the_rows_of_the_layers_below(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = layer.read_text() + "- insert:\n    - id: only-here\n      name: x\n- id: \n"
    client.open(layer, text)
    lines = text.split("\n")
    items = client.at("textDocument/completion", layer, len(lines) - 2, len("- id: "))["items"]
    labels = [i["label"] for i in items]
    dump = subprocess.run([str(DSHCTL), "--home", str(home), "profile", "dump", "--default-only", "-f", "json"],
                          capture_output=True, text=True, timeout=60)
    rows = json.loads(dump.stdout)["rows"]

    def ids(rs):
        for r in rs:
            yield r["id"]
            if r.get("group") and isinstance(r.get("config"), list):
                yield from ids(r["config"])

    assert sorted(labels) == sorted(set(ids(rows)))  # the bundles' rows: what this layer can patch
    assert "echo-lower" in labels and "only-here" not in labels


def test_completion_of_names_offers_the_installed_plugins(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = layer.read_text() + "- insert:\n    - id: new\n      name: \n"
    client.open(layer, text)
    lines = text.split("\n")
    items = client.at("textDocument/completion", layer, len(lines) - 2, len("      name: "))["items"]
    labels = [i["label"] for i in items]
    installed = sorted(f"@demo/{p.name}" for p in (home / "profiles/web/node_modules/@demo").iterdir())
    assert set(installed) <= set(labels) and {"cordis:group", "cordis:include"} <= set(labels)
    assert "@demo/greeter/echo" in labels  # mounted by a bundle's row


def test_completion_of_disabled_values(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = "- id: greeter\n  disabled: \n"
    client.open(layer, text)
    labels = [i["label"] for i in client.at("textDocument/completion", layer, 1, len("  disabled: "))["items"]]
    assert labels == ["true", "false", "!!js "]


def test_definition_of_a_patch_id_is_the_row_it_patches(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = layer.read_text()
    client.open(layer)
    found = client.at("textDocument/definition", layer, line_of(text, "- id: echo-lower"), 8)
    bundle = home / "profiles/web/node_modules/@demo/greeter/cordis.patch.yml"
    bundle_lines = bundle.read_text().split("\n")
    row_line = line_of(bundle.read_text(), "- id: echo-lower")
    assert found == {"uri": bundle.resolve().as_uri(), "range": {
        "start": {"line": row_line, "character": bundle_lines[row_line].index("-") + 2},
        "end": {"line": row_line, "character": bundle_lines[row_line].index("-") + 2}}}


def test_code_action_adds_a_disable_comment_that_silences_the_finding(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = "- id: greeter\n  disabled: \"yes\"\n"
    (diag,) = client.open(layer, text)
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": layer.as_uri()}, "range": diag["range"], "context": {"diagnostics": [diag]}})
    by_title = {a["title"]: a for a in actions}
    assert set(by_title) == {"Disable schema for this line", "Disable schema for this file"}
    (edit,) = by_title["Disable schema for this line"]["edit"]["changes"][layer.as_uri()]
    # the editor applies the edit: the finding is gone
    assert client.change(layer, 2, [{"range": edit["range"], "text": edit["newText"]}]) == []
    edited = text.split("\n")
    edited[1] += edit["newText"]
    proc = subprocess.run([str(DSHCTL), "lint", "-", "--stdin-filename", str(layer)], input="\n".join(edited),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout  # and dshctl lint agrees


def test_code_action_removes_an_unused_disable(client, home):
    layer = home / "profiles/web/cordis.patch.yml"
    text = "- id: greeter\n  disabled: true  # dshctl: disable-line=schema\n"
    (diag,) = client.open(layer, text)
    assert diag["code"] == "unused-disable"
    (action,) = client.request("textDocument/codeAction", {
        "textDocument": {"uri": layer.as_uri()}, "range": diag["range"], "context": {"diagnostics": [diag]}})
    (edit,) = action["edit"]["changes"][layer.as_uri()]
    assert client.change(layer, 2, [{"range": edit["range"], "text": edit["newText"]}]) == []


def test_settings_complete_preset_ids_and_go_to_the_preset(client, home):
    settings = home / "settings.yaml"
    text = "agent-presets:\n  default: \n"
    settings.write_text(text)
    client.open(settings, text)
    items = client.at("textDocument/completion", settings, 1, len("  default: "))["items"]
    listed = subprocess.run([str(DSHCTL), "--home", str(home), "preset", "list", "-f", "json"],
                            capture_output=True, text=True, timeout=60)
    shown = [p for p in json.loads(listed.stdout) if not p.get("shadowed_by")]
    assert sorted(i["label"] for i in items) == sorted(p["id"] for p in shown) and "reviewer" in \
        [i["label"] for i in items]
    text = "agent-presets:\n  default: reviewer\n"
    client.change(settings, 2, [{"text": text}])
    found = client.at("textDocument/definition", settings, 1, len("  default: rev"))
    reviewer = next(p for p in shown if p["id"] == "reviewer")
    assert found["uri"] == Path(reviewer["path"]).resolve().as_uri()  # the preset's agent.cordis.yml


def test_the_home_layer_belongs_to_the_profile_the_client_names(home):
    import shutil

    shutil.copytree(home / "profiles" / "web", home / "profiles" / "work")
    layer = home / "cordis.patch.yml"
    text = "- id: greeter\n  disabled: false\n"
    for named in ("web", "work"):
        c = LspClient([str(DSHCTL), "lsp"], {}, home, init_options={"profile": named})
        try:
            c.open(layer, text)
            shown = hover_text(c, layer, 0, 7)
        finally:
            c.close()
        assert f"row `greeter` in profile `{named}`:" in shown
        assert f"`{layer}` set disabled" in shown  # the buffer stands in for the home layer
