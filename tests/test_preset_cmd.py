"""`dshctl preset …` end to end: list, show, path, new, lint."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dshctl.cli.app import main

FIXTURES = Path(__file__).parent / "fixtures" / "presets"
DSHCTL = Path(sys.executable).parent / "dshctl"
ROOTS = ["--root", str(FIXTURES / "system"), "--root", str(FIXTURES / "user"), "--no-user-root"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    h = tmp_path / "home"
    h.mkdir()
    return h


def test_list_json_has_the_documented_fields(capsys, home):
    code, out, err = run(capsys, "--home", str(home), "preset", "list", *ROOTS, "--format", "json")
    assert code == 0, err
    items = json.loads(out)
    by_id = {i["id"]: i for i in items}
    for key in ("id", "path", "root", "trust", "name", "description", "order", "broken", "shadowed"):
        assert all(key in i for i in items), key
    assert by_id["standard"]["path"] == str(FIXTURES / "system" / "standard" / "agent.cordis.yml")
    # --root replaces the profile's roots; the shipped root still follows them.
    from dshctl.core.data import presets_dir

    assert by_id["standard"]["shadowed"] == [str(FIXTURES / "user" / "standard" / "agent.cordis.yml"),
                                             str(presets_dir() / "standard" / "agent.cordis.yml")]
    assert by_id["standard"]["trust"] == "user" and by_id["standard"]["order"] == 1
    assert by_id["row-not-map"]["broken"] == 'row 2 is not a plugin row (expected a map with a "name")'
    assert by_id["personal"]["broken"] is None and by_id["personal"]["name"] == "Personal"
    assert len(items) == len(by_id)  # one object per id: the winners


def test_list_text_shows_status_and_shadowing_when_piped(home):
    env = {**os.environ, "NO_COLOR": "", "DSH_HOME": str(home)}
    proc = subprocess.run([str(DSHCTL), "preset", "list", *ROOTS], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["ID", "NAME", "ORDER"]
    standard = [line for line in lines if line.startswith("standard ")]
    assert "shadows" in standard[0] and "shadowed by" in standard[1]
    assert any(line.strip().startswith("not-a-list: the composition must be a top-level list") for line in lines)
    assert "\x1b[" not in proc.stdout  # plain text when piped
    assert "skipped" in proc.stderr and "Upper-Case" in proc.stderr
    assert "did not compose" not in proc.stderr  # --root: the profile is not consulted


def test_no_note_when_the_default_profile_was_never_created(capsys, home):
    code, out, err = run(capsys, "--home", str(home), "preset", "list", "-f", "json")
    assert code == 0 and [i["id"] for i in json.loads(out)] == ["standard", "minimal"]
    assert err == ""


def test_a_profile_that_exists_but_fails_to_compose_is_one_note_and_the_command_still_works(capsys, home):
    web = home / "profiles" / "web"
    web.mkdir(parents=True)
    (web / "package.json").write_text('{"name": "dsh-profile-web", "dsh": {"profile": {"bundles": []}}}\n')
    (web / "cordis.patch.yml").write_text("- id: x\n  config: [unclosed\n")
    for command in (["list"], ["show", "standard"], ["path", "minimal"], ["lint", "standard"]):
        code, out, err = run(capsys, "--home", str(home), "preset", *command, "-f", "json")
        assert code == 0 and out, command
        assert err.count("\n") == 1 and err.startswith("dshctl: note: profile 'web' did not compose ("), command
        assert "cordis.patch.yml" in err


def test_a_missing_profile_named_explicitly_is_one_note(capsys, home):
    code, out, err = run(capsys, "--home", str(home), "--profile", "ghost", "preset", "list", "-f", "json")
    assert code == 0 and [i["id"] for i in json.loads(out)] == ["standard", "minimal"]
    assert err.count("\n") == 1 and err.startswith("dshctl: note: profile 'ghost' does not exist")


def test_list_fails_on_an_unreadable_root_naming_it(capsys, home, tmp_path):
    bad = tmp_path / "file-root"
    bad.write_text("x")
    code, out, err = run(capsys, "preset", "list", "--home", str(home), "--root", str(bad))
    assert code == 1 and out == ""
    assert f"agent-presets: cannot read preset root {bad}: ENOTDIR" in err and "hint:" in err
    assert "Traceback" not in err


def test_show_text_tree_and_json_rows(capsys, home):
    code, out, _ = run(capsys, "preset", "show", "standard", "--home", str(home))
    assert code == 0
    assert "file:" in out and "presets/standard/agent.cordis.yml" in out
    assert "  - session-log (cordis:group)" in out and "    - logger (@dshctl/logger)" in out
    code, out, _ = run(capsys, "preset", "show", "standard", "--home", str(home), "-f", "json")
    data = json.loads(out)
    assert data["trust"] == "system"
    group = next(r for r in data["rows"] if r["id"] == "session-log")
    assert group["config"][0]["name"] == "@dshctl/logger"
    assert group["disabled"] == {"__jsExpr": "process.env.DSH_PRESET_LOG === 'off'"}


def test_show_broken_preset_and_unknown_id(capsys, home):
    code, out, _ = run(capsys, "preset", "show", "group-not-list", *ROOTS, "--home", str(home))
    assert code == 0 and "broken:      group row 2 must hold a list of plugin rows (" in out
    code, out, err = run(capsys, "preset", "show", "nope", *ROOTS, "--home", str(home))
    assert code == 1
    assert err.startswith('dshctl: error: agent-presets: preset "nope" not found (available: standard, minimal, ')


def test_path_prints_the_winning_directory(capsys, home):
    code, out, _ = run(capsys, "--home", str(home), "preset", "path", "standard", *ROOTS)
    assert (code, out) == (0, f"{FIXTURES / 'system' / 'standard'}\n")
    code, out, _ = run(capsys, "preset", "--home", str(home), "path", "minimal", "-f", "json")
    assert json.loads(out)["path"].endswith("presets/minimal/agent.cordis.yml")


# ---------------------------------------------------------------------------------------------
# new


def _source(tmp_path: Path) -> Path:
    src = tmp_path / "src" / "origin"
    (src / "skills").mkdir(parents=True)
    (src / "agent.cordis.yml").write_text("- id: a\n  name: ./plugin.py\n")
    (tmp_path / "outside.py").write_text("# real file behind a symlink\n")
    os.symlink(tmp_path / "outside.py", src / "plugin.py")
    (src / "skills" / "s.md").write_text("skill")
    (src / "preset.yml").write_text("name: Origin\ndescription: 'Kept: with a colon'\norder: 2\n")
    os.chmod(src / "agent.cordis.yml", 0o644)
    return src


def test_new_copies_tightens_and_rewrites_metadata(capsys, home, tmp_path):
    src = _source(tmp_path)
    code, out, err = run(capsys, "--home", str(home), "preset", "new", "mine", "--from", str(src))
    assert code == 0, err
    target = home / ".agent-presets" / "mine"
    assert out.strip() == f"created {target} (from {src})"
    assert (target / "plugin.py").is_file() and not (target / "plugin.py").is_symlink()
    assert (target / "preset.yml").read_text() == "description: 'Kept: with a colon'\n"
    for path in [target, target / "skills"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o700
    for path in [target / "agent.cordis.yml", target / "skills" / "s.md", target / "preset.yml"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    code, out, _ = run(capsys, "--home", str(home), "preset", "list", "-f", "json")
    mine = next(i for i in json.loads(out) if i["id"] == "mine")
    assert mine["description"] == "Kept: with a colon" and mine["name"] is None and mine["order"] is None


def test_new_from_an_id_refuses_to_overwrite_and_rejects_bad_ids(capsys, home):
    code, _, err = run(capsys, "--home", str(home), "preset", "new", "my-std", "--from", "standard")
    assert code == 0, err
    original = (home / ".agent-presets" / "my-std" / "agent.cordis.yml").read_bytes()
    code, _, err = run(capsys, "--home", str(home), "preset", "new", "my-std", "--from", "minimal")
    assert code == 1 and "already exists; refusing to overwrite it" in err
    assert (home / ".agent-presets" / "my-std" / "agent.cordis.yml").read_bytes() == original
    code, _, err = run(capsys, "--home", str(home), "preset", "new", "Bad_Id", "--from", "minimal")
    assert code == 2 and "not a valid preset id" in err


def test_new_that_fails_midway_leaves_nothing_behind(capsys, home, tmp_path):
    src = _source(tmp_path)
    os.symlink(tmp_path / "does-not-exist", src / "skills" / "dangling.md")  # the copy fails here
    code, _, err = run(capsys, "--home", str(home), "preset", "new", "half", "--from", str(src))
    assert code == 1 and "cannot copy" in err and "dangling.md" in err
    assert sorted(os.listdir(home / ".agent-presets")) == [".dshctl"]


# ---------------------------------------------------------------------------------------------
# lint


def test_shipped_presets_are_lint_clean(capsys, home):
    code, out, err = run(capsys, "--home", str(home), "preset", "lint", "--no-user-root", "-f", "json")
    assert (code, json.loads(out)["findings"]) == (0, []), err


def test_lint_reports_health_metadata_skips_and_shadowing(capsys, home):
    code, out, _ = run(capsys, "--home", str(home), "preset", "lint", *ROOTS, "-f", "json")
    assert code == 1
    diags = json.loads(out)["findings"]
    rules = {d["rule"] for d in diags}
    assert {"preset-health", "preset-metadata", "preset-skipped", "preset-shadowed"} <= rules
    health = [d for d in diags if d["rule"] == "preset-health" and "nested-no-name" in d["file"]]
    assert health[0]["message"] == 'row 1 row 1 names no plugin (a "name" string is required)'
    assert (health[0]["line"], health[0]["column"]) == (5, 7)
    personal = [d for d in diags if "/personal/" in d["file"]]
    assert personal == []  # ./plugin.py exists beside it


def _preset(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "lintme"
    d.mkdir()
    (d / "agent.cordis.yml").write_text(text)
    return d


def test_lint_path_finds_missing_plugin_files_js_outside_the_subset_and_duplicate_ids(capsys, home,
                                                                                       tmp_path):
    d = _preset(tmp_path, "- id: a\n  name: ./missing.js\n"
                          "- id: b\n  name: x\n  config:\n    v: !!js require('fs')\n"
                          "- id: g\n  name: cordis:group\n  group: true\n  config:\n"
                          "    - id: a\n      name: y\n      disabled: !!js process.platform === 'linux'\n")
    code, out, _ = run(capsys, "--home", str(home), "preset", "lint", str(d))
    assert code == 1
    lines = out.splitlines()
    file = d / "agent.cordis.yml"
    assert any(line.startswith(f"{file}:2:9: error [preset-plugin-missing] plugin file ./missing.js")
               for line in lines)
    assert any(f"{file}:6:8: error [preset-js] unsupported !!js expression in row \"b\" (x) at config.v: "
               "require('fs')" in line for line in lines)
    assert any(f"{file}:11:11: error [preset-duplicate-row-id] duplicate loader entry id: a" in line
               for line in lines)
    assert not any("process.platform" in line for line in lines)  # inside the subset


def test_lint_by_id_and_directory_of_presets(capsys, home):
    code, out, _ = run(capsys, "--home", str(home), "preset", "lint", "minimal", "-f", "json")
    assert (code, json.loads(out)["findings"]) == (0, [])
    code, out, _ = run(capsys, "--home", str(home), "preset", "lint", str(FIXTURES / "system"), "-f", "json")
    assert (code, json.loads(out)["findings"]) == (0, [])
    code, _, err = run(capsys, "--home", str(home), "preset", "lint", "no-such-preset")
    assert code == 1 and 'preset "no-such-preset" not found' in err


def test_lint_rejects_an_unknown_format(capsys, home):
    code, _, err = run(capsys, "--home", str(home), "preset", "lint", "-f", "xml")
    assert code == 2 and "unknown format" in err


def test_lint_of_a_misnamed_preset_directory_or_a_stray_file(capsys, home, tmp_path):
    d = tmp_path / "My_Preset"
    d.mkdir()
    (d / "agent.cordis.yml").write_text("[]\n")
    code, out, _ = run(capsys, "--home", str(home), "preset", "lint", str(d), "-f", "json")
    assert code == 1 and [x["rule"] for x in json.loads(out)["findings"]] == ["preset-skipped"]
    stray = tmp_path / "notes.txt"
    stray.write_text("x")
    code, _, err = run(capsys, "--home", str(home), "preset", "lint", str(stray))
    assert code == 1 and f"{stray} is not a preset" in err


def test_concurrent_new_with_the_same_id_creates_exactly_one(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from dshctl.core.presets import preset_at
    from dshctl.core.presets.authoring import copy_preset
    from dshctl.errors import DshctlError

    source = preset_at(FIXTURES / "user" / "personal")
    into = tmp_path / "root"

    def attempt(_):
        try:
            return str(copy_preset(source, "racer", into))
        except DshctlError as err:
            return err.message

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(attempt, range(4)))
    assert results.count(str(into / "racer")) == 1
    assert sum("refusing to overwrite" in r for r in results) == 3
    assert sorted(os.listdir(into)) == [".dshctl", "racer"]
    assert (into / "racer" / "plugin.py").read_text() == (FIXTURES / "user" / "personal" / "plugin.py").read_text()


def _profile_with_presets_row(home: Path, config: str) -> None:
    web = home / "profiles" / "web"
    web.mkdir(parents=True)
    (web / "package.json").write_text(json.dumps(
        {"name": "dsh-profile-web", "private": True, "dsh": {"profile": {"bundles": ["@dshctl/host-base"]}}}))
    (web / "cordis.patch.yml").write_text(f"- id: agent-presets\n  config:\n{config}")


@pytest.mark.parametrize("include_user_root", [True, False])
def test_list_follows_the_launcher_overlay_of_the_profile_row(capsys, home, tmp_path, include_user_root):
    """dsh's launcher overwrites the row's `roots` with the shipped root and keeps `includeUserRoot`:
    the user's own root is never scanned, the user root only when includeUserRoot is not false."""
    own = tmp_path / "own"
    (own / "mine").mkdir(parents=True)
    (own / "mine" / "agent.cordis.yml").write_text("[]\n")
    (home / ".agent-presets" / "personal").mkdir(parents=True)
    (home / ".agent-presets" / "personal" / "agent.cordis.yml").write_text("[]\n")
    _profile_with_presets_row(home, f"    default: standard\n    roots: [{{path: {own}}}]\n"
                                    f"    includeUserRoot: {str(include_user_root).lower()}\n")
    code, out, err = run(capsys, "--home", str(home), "preset", "list", "-f", "json")
    assert (code, err) == (0, "")
    listed = [(p["id"], p["trust"]) for p in json.loads(out)]
    expected = [("standard", "system"), ("minimal", "system")]
    assert listed == expected + ([("personal", "user")] if include_user_root else [])
    code, out, _ = run(capsys, "--home", str(home), "preset", "list", "-f", "json", "--root", str(own))
    assert [p["id"] for p in json.loads(out)][0] == "mine"  # --root replaces the profile's roots


def test_new_into_a_file_is_one_error_line_not_an_internal_error(capsys, home, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    for into in (blocker, blocker / "sub"):
        code, out, err = run(capsys, "--home", str(home), "preset", "new", "mine", "--from", "standard",
                             "--into", str(into))
        assert (code, out) == (1, "")
        assert err.startswith(f"dshctl: error: {into}: cannot create the preset root: ") and "hint:" in err
    assert blocker.read_text() == "x"


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("extra", [[], ["--profile", "ghost"], ["--root", "/nonexistent-root"]])
def test_list_on_the_fast_path_is_byte_identical_to_typer(home, fmt, extra):
    """`preset list` runs without typer (cli/fastpath.py): same stdout, stderr and exit code as
    through typer, and the JSON path imports neither typer, click nor rich."""
    def list_(fast: str):
        env = {**os.environ, "NO_COLOR": "1", "DSHCTL_FASTPATH": fast}
        return subprocess.run([str(DSHCTL), "--home", str(home), "preset", "list", *ROOTS, *extra, "-f", fmt],
                              capture_output=True, text=True, env=env)

    fast, slow = list_("1"), list_("0")
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert fast.returncode == 0 and fast.stdout


def test_list_json_on_the_fast_path_imports_no_cli_framework(home):
    code = ("import sys\nfrom dshctl.cli.app import _run\n"
            f"rc = _run(['--home', {str(home)!r}, 'preset', 'list', *{ROOTS!r}, '-f', 'json'])\n"
            "sys.stderr.write(f\"{rc} {sorted(m for m in ('typer', 'click', 'rich') if m in sys.modules)}\")")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "DSHCTL_FASTPATH": "1"})
    assert proc.stderr.strip().splitlines()[-1] == "0 []", proc.stderr
