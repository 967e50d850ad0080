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


def test_neovim_recipe_shows_lints_findings_hover_and_clears_on_edit(tmp_path):
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.fail("`nvim` is not on PATH: dev.py's TEST_TOOLS installs Debian's neovim for this test")
    (tmp_path / "init.lua").write_text(recipe("lsp-neovim"))
    work = tmp_path / "w"
    work.mkdir()
    doc = work / "cordis.yml"
    doc.write_text('- id: greeter\n  disabled: "yes"\n')
    out = tmp_path / "out.json"
    env = {**os.environ, "PATH": f"{DSHCTL.parent}{os.pathsep}{os.environ['PATH']}", "OUT": str(out),
           "HOVER_LINE": "1", "HOVER_COL": "14", "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_DATA_HOME": str(tmp_path / "data")}
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(tmp_path / "init.lua"), doc.name,
                           "-c", f"luafile {Path(__file__).with_name('nvim_driver.lua')}"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(out.read_text())
    lint = subprocess.run([str(DSHCTL), "lint", "-f", "json", str(doc)], capture_output=True, text=True, timeout=60)
    findings = json.loads(lint.stdout)["findings"]
    assert shown["got"] and shown["filetype"] == "yaml"
    assert [(d["lnum"] + 1, d["col"] + 1, d["code"], d["message"]) for d in shown["diagnostics"]] == \
        [(f["line"], f["column"], f["rule"], f["message"]) for f in findings]
    assert 'the string "yes": it disables the row' in shown["hover"]
    assert shown["cleared"]  # `disabled: true` typed into the buffer: the finding went away
