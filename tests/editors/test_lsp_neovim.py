"""docs/editors.md's Neovim recipe, in real Neovim (Debian's `neovim`, headless): the recipe's own
Lua as init.lua, a dsh file opened, and Neovim's LSP client starting `dshctl lsp`, attaching, and
showing lint's findings; a hover request; an edit in the buffer that clears the finding.
tests/editors/nvim_driver.lua does what a person would do and writes what Neovim showed as JSON."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DSHCTL = Path(sys.executable).parent / "dshctl"


def recipe(name: str) -> str:
    text = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    return dict(re.findall(r"<!-- recipe: ([\w-]+) -->\n```\w*\n(.*?)```", text, re.S))[name]


def run_neovim(tmp_path: Path, text: str, **driver_env: str) -> tuple[Path, dict]:
    """Neovim with the recipe as init.lua, ``text`` open as cordis.yml, the driver's record of it."""
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.fail("`nvim` is not on PATH: dev.py's TEST_TOOLS installs Debian's neovim for this test")
    (tmp_path / "init.lua").write_text(recipe("lsp-neovim"))
    work = tmp_path / "w"
    work.mkdir()
    doc = work / "cordis.yml"
    doc.write_text(text)
    out = tmp_path / "out.json"
    env = {**os.environ, "PATH": f"{DSHCTL.parent}{os.pathsep}{os.environ['PATH']}", "OUT": str(out),
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_DATA_HOME": str(tmp_path / "data"), **driver_env}
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(tmp_path / "init.lua"), doc.name,
                           "-c", f"luafile {Path(__file__).with_name('nvim_driver.lua')}"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return doc, json.loads(out.read_text())


def test_neovim_recipe_shows_lints_findings_hover_and_clears_on_edit(tmp_path):
    doc, shown = run_neovim(tmp_path, '- id: greeter\n  disabled: "yes"\n', HOVER_LINE="1", HOVER_COL="14")
    lint = subprocess.run([str(DSHCTL), "lint", "-f", "json", str(doc)], capture_output=True, text=True, timeout=60)
    findings = json.loads(lint.stdout)["findings"]
    assert shown["got"] and shown["filetype"] == "yaml"
    assert [(d["lnum"] + 1, d["col"] + 1, d["code"], d["message"]) for d in shown["diagnostics"]] == \
        [(f["line"], f["column"], f["rule"], f["message"]) for f in findings]
    assert 'the string "yes": it disables the row' in shown["hover"]
    assert shown["cleared"]  # `disabled: true` typed into the buffer: the finding went away


def test_neovim_completes_and_explains_a_plugins_config_keys(tmp_path):
    """A shipped plugin's row: Neovim's hover on a config key shows its schema facts, and completion
    in the config offers the keys not written yet (from the plugin's own schema)."""
    from dshctl.host.plugins import http

    text = '- id: web\n  disabled: "yes"\n  name: "@dshctl/http"\n  config:\n    port: 1\n    \n'
    _, shown = run_neovim(tmp_path, text, HOVER_LINE="4", HOVER_COL="5", COMPLETE_LINE="5", COMPLETE_COL="4")
    port = http.schema["properties"]["port"]
    assert shown["hover"].startswith(f"`port`: {port['type']}") and f"default: `{port['default']}`" in shown["hover"]
    assert shown["completion"] == [k for k in http.schema["properties"] if k != "port"]
