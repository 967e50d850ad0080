"""The Helix and VS Code recipes of docs/editors.md (neither editor installs on the test machines):
the command each names, run as the editor runs it (found on PATH), is a language server that answers
`initialize` and publishes lint's findings for an opened file. The Neovim recipe runs in real Neovim
(test_lsp_neovim.py)."""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tomllib
from pathlib import Path

from tests.editors.lsp_client import LspClient

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def recipes() -> dict[str, str]:
    text = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    return dict(re.findall(r"<!-- recipe: ([\w-]+) -->\n```\w*\n(.*?)```", text, re.S))


def helix_command() -> list[str]:
    config = tomllib.loads(recipes()["lsp-helix"])
    server = config["language-server"]["dshctl"]
    assert {lang["name"] for lang in config["language"] if "dshctl" in lang["language-servers"]} == {"yaml", "json"}
    return [server["command"], *server["args"]]


def vscode_command() -> list[str]:
    package = json.loads(recipes()["lsp-vscode-package"])
    assert package["main"] == "./extension.js" and "vscode-languageclient" in package["dependencies"]
    assert set(package["activationEvents"]) == {"onLanguage:yaml", "onLanguage:json"}
    m = re.search(r'\{ command: "([^"]+)", args: (\[[^\]]*\]) \}', recipes()["lsp-vscode-extension"])
    assert m, "the extension's server options"
    return [m.group(1), *json.loads(m.group(2))]


def _serves(argv: list[str], tmp_path: Path) -> list[dict]:
    exe = shutil.which(argv[0], path=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    assert exe is not None
    doc = tmp_path / "cordis.patch.yml"
    doc.write_text("- id: web\n  disabled: \"no\"\n")
    c = LspClient([exe, *argv[1:]], {}, tmp_path)
    try:
        assert c.server_info["serverInfo"]["name"] == "dshctl"
        assert c.server_info["capabilities"]["hoverProvider"]
        return c.open(doc)
    finally:
        c.close()


def test_helix_recipe_starts_the_server(tmp_path):
    (diag,) = _serves(helix_command(), tmp_path)
    assert diag["code"] == "schema" and diag["range"]["start"] == {"line": 1, "character": 12}


def test_vscode_recipe_starts_the_server(tmp_path):
    (diag,) = _serves(vscode_command(), tmp_path)
    assert diag["code"] == "schema" and diag["range"]["start"] == {"line": 1, "character": 12}
