"""The `dshctl-lint` pre-commit hook, run by the real pre-commit (from PyPI, the `test` extra).

``pre-commit try-repo`` installs the hook repository with pip from its HEAD, so the test commits a
snapshot of the current working tree into a temporary git repository and points try-repo at it; pip
builds dshctl from it (hatchling comes from the package registry).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml  # PyYAML comes with pre-commit
from hypothesis import given, strategies as st

from dshctl.core.yaml import filekinds as fk

ROOT = Path(__file__).resolve().parents[1]
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
HOOK = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())[0]
FILES = re.compile(HOOK["files"])


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def snapshot_of_worktree(dest: Path) -> Path:
    """A git repository whose HEAD is the working tree as it is now (tracked and new files)."""
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "snapshot")
    return dest


def test_hook_declaration():
    assert (HOOK["id"], HOOK["language"], HOOK["entry"]) == ("dshctl-lint", "python", "dshctl lint")


NAMES = ["cordis.yml", "cordis.yaml", "agent.cordis.yml", "x.cordis.yaml", "cordis.patch.yml",
         "cordis.patch.local.yml", "cordis.patch.yaml", "a.overlay.yml", ".overlay.yaml", "preset.yml",
         "preset.yaml", "package.json", "cordis.yml.bak", "pnpm-workspace.yaml", ".pre-commit-config.yaml",
         "settings.yaml", "mycordis.yml", "cordis.patch", "preset.yml~", "package.jsonc", "overlay.yml",
         "ok.cordis.patch.yml", "ok.cordis.patch.yaml", "ok.cordis.patch.yml.bak"]


@pytest.mark.parametrize("name", NAMES)
def test_files_pattern_matches_exactly_the_kinds_dshctl_lints(name):
    for path in (name, f"some/dir/{name}"):
        assert bool(FILES.search(path)) == (fk.kind_of(name) is not None), path


@given(st.text(alphabet="acdeimnoprstxyl.-_", min_size=1, max_size=24))
def test_files_pattern_agrees_with_kind_of_on_any_name(name):
    assert bool(FILES.search(f"d/{name}")) == (fk.kind_of(name) is not None)


def test_try_repo_fails_on_the_bad_preset_and_only_on_it(tmp_path):
    hook_repo = snapshot_of_worktree(tmp_path / "hook-repo")
    user = tmp_path / "user"
    files = {
        ".agent-presets/bad/agent.cordis.yml": "- id: tools\n- id: x\n  name: cordis:group\n  group: true\n",
        ".agent-presets/good/agent.cordis.yml": "- id: tools\n  name: '@dshctl/tools'\n",
        ".agent-presets/good/preset.yml": "name: Good\n",
        "profiles/web/cordis.patch.yml": "[]\n",
        # YAML that is not dsh's, and would fail if it were ever passed to dshctl
        ".pre-commit-config.yaml": "repos: []\n",
        "pnpm-workspace.yaml": "packages: [\n",
        "docs/settings.yaml": "- not: [a, mapping\n",
    }
    for rel, text in files.items():
        (user / rel).parent.mkdir(parents=True, exist_ok=True)
        (user / rel).write_text(text)
    git(user, "init", "-q", "-b", "main")
    git(user, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}
    proc = subprocess.run([str(PRE_COMMIT), "try-repo", str(hook_repo), "dshctl-lint", "--all-files",
                           "--verbose", "--color", "never"], cwd=user, capture_output=True, text=True,
                          env=env, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "dshctl lint" in out and "Failed" in out
    bad = ".agent-presets/bad/agent.cordis.yml"
    findings = [ln for ln in out.splitlines() if re.match(r"\S+:\d+:\d+: (error|warning)", ln)]
    assert findings and all(ln.startswith(bad + ":") for ln in findings), out
    assert "pnpm-workspace" not in out and "settings.yaml" not in out and ".pre-commit-config" not in out
    assert "3 file(s) checked" in out or "4 file(s) checked" in out
    # and once the preset is fixed, the hook passes
    (user / bad).write_text("- id: tools\n  name: '@dshctl/tools'\n")
    git(user, "add", "-A")
    proc = subprocess.run([str(PRE_COMMIT), "try-repo", str(hook_repo), "dshctl-lint", "--all-files"],
                          cwd=user, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
