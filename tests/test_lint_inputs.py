"""`dshctl lint` inputs: standard input, --kind, and a dsh home's settings.yaml (with a real process)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

DSHCTL = Path(sys.executable).parent / "dshctl"


def dshctl(*args: str, stdin: str | None = None, cwd: Path | None = None, env: dict | None = None):
    return subprocess.run([str(DSHCTL), *args], input=stdin, capture_output=True, text=True, timeout=60,
                          cwd=cwd, env={**os.environ, **(env or {})})


def findings(proc) -> list[tuple[str, str, int, int]]:
    return [(d["file"], d["rule"], d["line"], d["column"]) for d in json.loads(proc.stdout)["findings"]]


def test_stdin_with_kind_and_stdin_filename(tmp_path):
    text = "- id: a:b\n  disabled: yes\n"
    proc = dshctl("lint", "-", "--kind", "cordis.patch", "-f", "json", stdin=text)
    assert proc.returncode == 1
    assert findings(proc) == [("<stdin>", "id-colon", 1, 7), ("<stdin>", "schema", 2, 13)]
    proc = dshctl("lint", "-", "--stdin-filename", "profiles/web/cordis.patch.yml", stdin=text)
    assert proc.returncode == 1
    assert proc.stdout.startswith("profiles/web/cordis.patch.yml:1:7: error [id-colon]")


def test_stdin_uses_the_config_beside_the_stdin_filename(tmp_path):
    (tmp_path / ".dshctl-lint.yaml").write_text("rules:\n  id-colon: off\n")
    proc = dshctl("lint", "-", "--stdin-filename", str(tmp_path / "x.cordis.yml"), "-f", "json",
                  stdin="- id: a:b\n  name: n\n")
    assert (proc.returncode, findings(proc)) == (0, [])


def test_stdin_without_a_kind_is_a_usage_error():
    proc = dshctl("lint", "-", stdin="[]\n")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["dshctl: error: cannot tell the kind of standard input",
                                        "  hint: add --kind KIND (e.g. --kind cordis.patch) or --stdin-filename NAME"]
    proc = dshctl("lint", "-", "--kind", "yamlish", stdin="[]\n")
    assert proc.returncode == 2 and proc.stderr.startswith("dshctl: error: unknown kind 'yamlish'")


def test_kind_forces_the_kind_of_an_oddly_named_file(tmp_path):
    odd = tmp_path / "web-overrides.yaml"
    odd.write_text("- id: web\n  disabled: yes\n")
    proc = dshctl("lint", str(odd))
    assert proc.returncode == 0 and "not a dsh file kind; skipped" in proc.stderr
    proc = dshctl("lint", "--kind", "patch", "-f", "json", str(odd))
    assert (proc.returncode, findings(proc)) == (1, [(str(odd), "schema", 2, 13)])


SETTINGS = "ui-theme:\n  preference: sepia\nlocale: en\nagent-presets:\n  default: reviewer\n"


def test_dsh_home_settings_yaml_is_linted_against_its_schema(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.yaml").write_text(SETTINGS)
    expected = [(str(home / "settings.yaml"), "schema", 2, 15), (str(home / "settings.yaml"), "schema", 3, 9)]
    # $DSH_HOME/settings.yaml, named or found by walking the home
    for args in ([str(home / "settings.yaml")], [str(home)]):
        proc = dshctl("lint", "-f", "json", *args, env={"DSH_HOME": str(home)})
        assert (proc.returncode, findings(proc)) == (1, expected), proc.stderr
    # a home recognised by its layout (profiles/) without $DSH_HOME
    (home / "profiles").mkdir()
    proc = dshctl("lint", "-f", "json", str(home), env={"DSH_HOME": str(tmp_path / "elsewhere")})
    assert (proc.returncode, findings(proc)) == (1, expected)
    messages = [d["message"] for d in json.loads(proc.stdout)["findings"]]
    assert messages == ["'sepia' is not one of ['light', 'dark', 'system']", 'expected a mapping, got "en"']


def test_settings_yaml_outside_a_home_is_not_ours_unless_forced(tmp_path):
    (tmp_path / "settings.yaml").write_text(SETTINGS)
    proc = dshctl("lint", str(tmp_path / "settings.yaml"), env={"DSH_HOME": str(tmp_path / "h")})
    assert proc.returncode == 0 and "skipped" in proc.stderr
    proc = dshctl("lint", "--kind", "settings", "-f", "json", str(tmp_path / "settings.yaml"))
    assert proc.returncode == 1 and len(findings(proc)) == 2


def test_valid_settings_and_settings_json(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "settings.yaml").write_text("ui-theme: {preference: dark}\nmy-plugin: {anything: [1, 2]}\n")
    (tmp_path / "settings.json").write_text('{"locale": {"preference": "fr"}}')
    proc = dshctl("lint", "-f", "json", str(tmp_path))
    assert findings(proc) == [(str(tmp_path / "settings.json"), "schema", 1, 27)]


def test_a_named_patch_file_is_linted_as_a_patch_list(tmp_path):
    """`work.cordis.patch.yml`, a patch file for `--patch`, was once skipped as no dsh kind."""
    path = tmp_path / "ok.cordis.patch.yml"
    path.write_text("- id: web\n  disabled: 'yes'\n")
    proc = subprocess.run([str(Path(sys.executable).parent / "dshctl"), "lint", "-f", "json", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert "skipped" not in proc.stderr and proc.returncode == 1, proc.stderr
    assert [(f["rule"], f["line"], f["column"]) for f in json.loads(proc.stdout)["findings"]] == [("schema", 2, 13)]


def test_every_missing_path_is_named_in_the_one_error_line(tmp_path):
    present = tmp_path / "cordis.yml"
    present.write_text("- id: a\n  name: x\n")
    proc = subprocess.run([str(Path(sys.executable).parent / "dshctl"), "lint", str(tmp_path / "nope1.yml"),
                           str(present), str(tmp_path / "nope2.yml"), str(tmp_path / "gone")],
                          capture_output=True, text=True, timeout=60)
    first, hint = proc.stderr.splitlines()
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert first == (f"dshctl: error: {tmp_path / 'nope1.yml'}: no such file or directory "
                     f"(nor: {tmp_path / 'nope2.yml'}, {tmp_path / 'gone'})")
    assert hint == "  hint: pass files or directories that exist"
