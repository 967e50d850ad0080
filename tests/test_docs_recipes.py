"""The recipes of docs/cli.md and docs/editors.md (blocks marked ``<!-- recipe: NAME -->``), run.

The commands the pages show are exercised by the command tests (test_lint_inputs, test_lint_config,
test_precommit_hook, editors/test_yaml_language_server); here the pages' own blocks are used as input.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml  # PyYAML, from pre-commit

from dshctl import PROJECT_URL

ROOT = Path(__file__).resolve().parents[1]
DSHCTL = Path(sys.executable).parent / "dshctl"


def recipes(page: str) -> dict[str, str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    found = re.findall(r"<!-- recipe: ([\w-]+) -->\n```\w*\n(.*?)```", text, re.S)
    return {name: body for name, body in found}


CLI = recipes("cli.md")
EDITORS = recipes("editors.md")


def lint(*args: str, cwd: Path | None = None) -> list[tuple[str, str, int]]:
    proc = subprocess.run([str(DSHCTL), "lint", "-f", "json", *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return [(Path(d["file"]).name, d["rule"], d["severity"]) for d in json.loads(proc.stdout)["findings"]]


def test_all_recipes_found():
    assert set(CLI) == {"lint-config", "lint-pyproject", "disable-comments", "pre-commit", "completion"}
    assert set(EDITORS) == {"export", "vscode-settings", "modeline", "lsp-neovim", "lsp-helix",
                            "lsp-vscode-package", "lsp-vscode-extension"}


def _tree(root: Path) -> None:
    for rel in ("repo/cordis.yml", "repo/presets/p/agent.cordis.yml", "repo/sub/legacy.cordis.yml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("- name: dsh-hello\n- id: w\n  name: w\n  config: {p: !!js Number(1)}\n")
    (root / "shared").mkdir()
    (root / "shared" / ".dshctl-lint.yaml").write_text("rules:\n  js-unsupported: error\n")


EXPECTED = [("cordis.yml", "id-missing", "error"),
            ("agent.cordis.yml", "id-missing", "warning"),
            ("legacy.cordis.yml", "id-missing", "warning")]


def test_config_recipe(tmp_path):
    _tree(tmp_path)
    (tmp_path / "repo" / ".dshctl-lint.yaml").write_text(CLI["lint-config"])
    got = lint("repo/cordis.yml", "repo/presets/p/agent.cordis.yml", "repo/sub/legacy.cordis.yml", cwd=tmp_path)
    assert sorted(got) == sorted(EXPECTED)


def test_pyproject_recipe_means_the_same(tmp_path):
    _tree(tmp_path)
    (tmp_path / "repo" / "pyproject.toml").write_text(CLI["lint-pyproject"])
    got = lint("repo/cordis.yml", "repo/presets/p/agent.cordis.yml", "repo/sub/legacy.cordis.yml", cwd=tmp_path)
    assert sorted(got) == sorted(EXPECTED)


def test_disable_comments_recipe_disables_everything_it_names(tmp_path):
    p = tmp_path / "cordis.yml"
    p.write_text(CLI["disable-comments"])
    assert lint(str(p)) == []
    without = re.sub(r" *# dshctl:.*", "", CLI["disable-comments"])
    p.write_text(without)  # the same rows without the comments: each disabled rule fires
    assert sorted(r for _, r, _ in lint(str(p))) == ["id-colon", "id-missing", "js-unsupported"]
    p.write_text(CLI["disable-comments"].replace("=js-unsupported", "=js-unsupported,id-missing"))
    assert lint(str(p)) == [("cordis.yml", "unused-disable", "warning")]


def test_pre_commit_recipe_rev_is_a_ref_the_repository_has(tmp_path):
    """pre-commit fetches `rev` from the hook repository; a tag that does not exist fails there (the
    recipe once said v0.1.0, which was never tagged). Fetched from this checkout the same way."""
    (repo,) = yaml.safe_load(CLI["pre-commit"])["repos"]
    subprocess.run(["git", "init", "-q", str(tmp_path / "clone")], check=True, timeout=60)
    proc = subprocess.run(["git", "-C", str(tmp_path / "clone"), "fetch", "-q", "--depth=1", str(ROOT), repo["rev"]],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"rev {repo['rev']!r}: {proc.stderr}"


def test_pre_commit_recipe_names_the_shipped_hook():
    config = yaml.safe_load(CLI["pre-commit"])
    (repo,) = config["repos"]
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert repo["repo"] == PROJECT_URL and [h["id"] for h in repo["hooks"]] == [h["id"] for h in hooks]


def test_vscode_settings_recipe_is_what_export_writes(tmp_path):
    command = EDITORS["export"].split()
    assert command[:3] == ["dshctl", "schema", "export"]
    proc = subprocess.run([str(DSHCTL), *command[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    written = json.loads((tmp_path / command[3] / "vscode-settings.json").read_text())
    shown = json.loads(EDITORS["vscode-settings"])
    assert shown["yaml.customTags"] == written["yaml.customTags"]
    assert shown["json.schemas"] == written["json.schemas"]
    for schema, globs in shown["yaml.schemas"].items():
        assert set(globs) - {"…"} <= set(written["yaml.schemas"][schema]), schema


def test_modeline_recipe(tmp_path):
    first, body = EDITORS["modeline"].split("\n", 1)
    assert first.startswith("# yaml-language-server: $schema=") and first.endswith("/cordis.patch.schema.json")
    p = tmp_path / "cordis.patch.yml"
    p.write_text(EDITORS["modeline"])
    assert lint(str(p)) == []


def test_completion_recipe_prints_each_script():
    shells = [line.split("completion ")[1].split(")")[0].split()[0] for line in CLI["completion"].splitlines()]
    assert shells == ["bash", "zsh", "fish"]
    for shell in shells:
        proc = subprocess.run([str(DSHCTL), "completion", shell], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and "_DSHCTL_COMPLETE" in proc.stdout
