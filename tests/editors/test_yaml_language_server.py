"""The editor recipe of docs/editors.md, verified with the real yaml-language-server (npm) over stdio:
`dshctl schema export DIR` + the settings it writes give the same schema findings as `dshctl lint`,
none on valid files that use `!!js`, and the customTags advice is the one that works.

yaml-language-server comes from npm into a cache directory (``~/.cache/dshctl-test-yamlls``), the way
tests/test_patching_node.py installs js-yaml; Node and the npm registry are required (never skipped).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editors.lsp_client import LspClient

VERSION = "1.25.0"
DSHCTL = Path(sys.executable).parent / "dshctl"
SERVER = Path("node_modules") / "yaml-language-server" / "bin" / "yaml-language-server"

# Files with schema problems: both tools must report exactly the same (line, column)s.
BROKEN = {
    "profiles/web/cordis.patch.yml": "- insert:\n    - id: hello\n      name: dsh-hello\n    - id: nameless\n"
                                     "- id: web\n  disabled: !!js process.env.X === '1'\n",
    "cordis.yml": "- id: a\n  name: x\n  group: 'yes'\n  disabled: !!js process.env.OFF === '1'\n",
    ".agent-presets/p/agent.cordis.yml": "- id: tools\n  name: x\n  inject: 3\n",
    ".agent-presets/p/preset.yml": "name: P\norder: first\ncolour: red\n",
    ".dsh/settings.yaml": "ui-theme:\n  preference: sepia\nlocale: en\n",
}
# Valid files using !!js where dsh accepts it: no finding from either.
VALID = {
    "profiles/dev/cordis.patch.yml": "- id: web\n  disabled: !!js process.env.WEB === 'off'\n"
                                     "  config:\n    port: !!js process.env.PORT ?? 3080\n"
                                     "- insert:\n    - id: extra\n      name: dsh-extra\n"
                                     "      disabled: !!js \"!process.env.EXTRA\"\n",
    "x.cordis.yml": "- id: llm\n  name: '@deepseek-ai/dsh-llm'\n  disabled: !!js process.platform === 'win32'\n"
                    "  config:\n    key: !!js process.env.KEY\n",
}


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dshctl-test-yamlls"


def _installed(prefix: Path) -> bool:
    manifest = prefix / "node_modules" / "yaml-language-server" / "package.json"
    try:
        return json.loads(manifest.read_text())["version"] == VERSION
    except (OSError, ValueError, KeyError):
        return False


@pytest.fixture(scope="module")
def server() -> list[str]:
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            pytest.fail(f"`{tool}` is not on PATH: the editor test needs Node and npm")
    prefix = _cache_dir()
    if not _installed(prefix):
        prefix.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(prefix),
                               f"yaml-language-server@{VERSION}"], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0 or not _installed(prefix):
            pytest.fail(f"npm install yaml-language-server@{VERSION} failed:\n{proc.stderr[-2000:]}")
    return ["node", str(prefix / SERVER), "--stdio"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    for rel, text in {**BROKEN, **VALID}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    proc = subprocess.run([str(DSHCTL), "schema", "export", ".vscode/dshctl-schemas"], cwd=root,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return root


def lint_positions(root: Path, rel: str) -> set[tuple[int, int]]:
    proc = subprocess.run([str(DSHCTL), "lint", "-f", "json", str(root / rel)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "DSH_HOME": str(root / ".dsh")})
    assert proc.returncode in (0, 1), proc.stderr
    return {(d["line"], d["column"]) for d in json.loads(proc.stdout)["findings"] if d["rule"] == "schema"}


def editor_positions(client: LspClient, path: Path) -> set[tuple[int, int]]:
    return {(d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1)
            for d in client.diagnose(path)}


@pytest.fixture(scope="module")
def client(server, workspace):
    settings = json.loads((workspace / ".vscode/dshctl-schemas/yaml-language-server.json").read_text())
    c = LspClient(server, settings, workspace)
    yield c
    c.close()


@pytest.mark.parametrize("rel", sorted(BROKEN))
def test_editor_reports_what_dshctl_lint_reports(client, workspace, rel):
    expected = lint_positions(workspace, rel)
    assert expected  # each file has something to find
    assert editor_positions(client, workspace / rel) == expected


@pytest.mark.parametrize("rel", sorted(VALID))
def test_valid_files_with_js_are_clean_in_both(client, workspace, rel):
    assert lint_positions(workspace, rel) == set()
    assert editor_positions(client, workspace / rel) == set()


def test_vscode_settings_carry_the_same_advice(workspace):
    vscode = json.loads((workspace / ".vscode/dshctl-schemas/vscode-settings.json").read_text())
    lsp = json.loads((workspace / ".vscode/dshctl-schemas/yaml-language-server.json").read_text())["yaml"]
    assert vscode["yaml.customTags"] == lsp["customTags"] == ["tag:yaml.org,2002:js scalar"]
    exported = workspace / ".vscode/dshctl-schemas"
    assert {str((workspace / k).resolve()): v for k, v in vscode["yaml.schemas"].items()} == \
        {str(Path(k).resolve()): v for k, v in lsp["schemas"].items()}
    assert all((exported / "yaml-language-server" / Path(k).name).is_file() for k in vscode["yaml.schemas"])


def test_the_shorthand_custom_tag_does_not_work(server, workspace):
    """The old advice ("!!js scalar") leaves every !!js an unresolved tag: the reason for the full name."""
    settings = json.loads((workspace / ".vscode/dshctl-schemas/yaml-language-server.json").read_text())
    settings["yaml"]["customTags"] = ["!!js scalar"]
    c = LspClient(server, settings, workspace)
    try:
        messages = [d["message"] for d in c.diagnose(workspace / "x.cordis.yml")]
    finally:
        c.close()
    assert messages and all("Unresolved tag" in m for m in messages)


def test_without_the_editor_copy_js_would_be_an_editor_error(server, workspace):
    """The yaml-language-server/ copy (its string branch for `!!js`) is what keeps `disabled: !!js …`
    clean in that server; the strict schemas beside it, which validators get, flag it."""
    exported = workspace / ".vscode/dshctl-schemas"
    settings = json.loads((exported / "yaml-language-server.json").read_text())
    settings["yaml"]["schemas"] = {str(exported / Path(k).name): v for k, v in settings["yaml"]["schemas"].items()}
    c = LspClient(server, settings, workspace)
    try:
        diags = c.diagnose(workspace / "x.cordis.yml")
    finally:
        c.close()
    assert [(d["range"]["start"]["line"] + 1) for d in diags] == [3]


def test_modeline_with_the_installed_schema_path(server, workspace):
    """docs/editors.md, "Per file: a modeline": the exported yaml-language-server copy in a first-line
    comment."""
    path = workspace / ".vscode/dshctl-schemas/yaml-language-server/cordis.patch.schema.json"
    odd = workspace / "odd-name.yaml"
    odd.write_text(f"# yaml-language-server: $schema={path}\n" + BROKEN["profiles/web/cordis.patch.yml"])
    c = LspClient(server, {"yaml": {"customTags": ["tag:yaml.org,2002:js scalar"], "validate": True}}, workspace)
    try:
        got = editor_positions(c, odd)
    finally:
        c.close()
    proc = subprocess.run([str(DSHCTL), "lint", "--kind", "cordis.patch", "-f", "json", str(odd)],
                          capture_output=True, text=True, timeout=60)
    assert got == {(d["line"], d["column"]) for d in json.loads(proc.stdout)["findings"]} == {(5, 7)}
