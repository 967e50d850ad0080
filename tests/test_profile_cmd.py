"""`dshctl profile dump|explain|diff|list|init` end to end."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dshctl.cli.app import main
from dshctl.core.yaml.dialect import load_yaml
from profile_helpers import make_home, write
from demo_home import copy_demo_home

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "home"
GOLDEN = REPO / "tests" / "golden" / "examples-home-dump.yml"


def cli(capsys, *args) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DSHCTL_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def demo(tmp_path) -> Path:
    home = tmp_path / "home"
    copy_demo_home(home)
    return home


# ---------------------------------------------------------------------------------------------
# dump


def test_dump_of_examples_home_matches_golden(capsys):
    code, out, err = cli(capsys, "--home", str(EXAMPLE), "profile", "dump")
    assert code == 0 and err == ""
    assert out.replace(str(EXAMPLE), "<home>") == GOLDEN.read_text(encoding="utf-8")


def test_dump_is_loadable_and_equals_json_rows(capsys, demo):
    _, yaml_out, _ = cli(capsys, "profile", "dump", "--home", str(demo))
    _, json_out, _ = cli(capsys, "profile", "dump", "--home", str(demo), "--format", "json")
    data = json.loads(json_out)
    loaded = load_yaml(yaml_out, "dump.yml").value
    from dshctl.core.yaml.nodes import to_plain
    assert to_plain(loaded) == data["rows"]
    assert data["rows"][0]["config"]["level"] == {"__jsExpr": "process.env.DSH_LOG_LEVEL ?? 'info'"}
    assert [layer["kind"] for layer in data["layers"]] == ["bundle", "bundle", "bundle", "profile", "home"]


def test_dump_end_to_end_subprocess():
    proc = subprocess.run([str(REPO / ".venv/bin/dshctl"), "--home", str(EXAMPLE), "profile", "dump"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# == @dshctl/host-base, patched by @demo/greeter\n")


def test_root_and_subcommand_profile_options(capsys, tmp_path):
    home = make_home(tmp_path, profile="work")
    code1, out1, _ = cli(capsys, "--home", str(home), "--profile", "work", "profile", "dump")
    code2, out2, _ = cli(capsys, "profile", "dump", "--home", str(home), "--profile", "work")
    assert code1 == code2 == 0 and out1 == out2 and "id: a" in out1


def test_warnings_go_to_stderr_with_layer_location_and_suggestion(capsys, tmp_path):
    home = make_home(tmp_path, bundles={"base": "- insert: [{id: http-server, name: H}]\n"},
                     profile_layer="- id: http-servr\n  disabled: true\n")
    code, out, err = cli(capsys, "profile", "dump", "--home", str(home))
    layer = home / "profiles/web/cordis.patch.yml"
    assert code == 0 and "id: http-server" in out
    assert f'[{layer}] patch: entry "http-servr" not found ({layer}:1:7)' in err
    assert 'did you mean "http-server"?' in err


def test_json_warnings_carry_layer_file_line_column(capsys, tmp_path):
    home = make_home(tmp_path, profile_layer="- {id: zz, disabled: true}\n")
    _, out, _ = cli(capsys, "profile", "dump", "--home", str(home), "-f", "json")
    (w,) = json.loads(out)["warnings"]
    layer = str(home / "profiles/web/cordis.patch.yml")
    assert (w["layer"], w["message"], w["file"], w["line"], w["column"]) == (
        layer, 'patch: entry "zz" not found', layer, 1, 8)


def test_strict_turns_warnings_into_exit_1(capsys, tmp_path):
    home = make_home(tmp_path, profile_layer="- {id: zz, disabled: true}\n")
    code, out, err = cli(capsys, "profile", "dump", "--home", str(home), "--strict")
    assert code == 1 and out == "" and "--strict" in err
    code, _, _ = cli(capsys, "profile", "explain", "a", "--home", str(home), "--strict")
    assert code == 1


JS_LAYER = """\
- insert:
  - id: web
    name: W
    disabled: !!js process.platform === 'win32'
    config:
      port: !!js Number(process.env.PORT)
      host: !!js process.env.HOST ?? '127.0.0.1'
  - {id: g, name: 'cordis:group', group: true, config: [{id: c, name: C, disabled: !!js require('x')}]}
"""
JS_PORT = 'unsupported !!js expression in row "web" (W) at config.port: Number(process.env.PORT)'
JS_CHILD = 'unsupported !!js expression in row "c" (C) at disabled: require(\'x\')'


def test_dump_warns_about_js_the_host_cannot_evaluate(capsys, tmp_path):
    home = make_home(tmp_path, profile_layer=JS_LAYER)
    layer = home / "profiles/web/cordis.patch.yml"
    code, out, err = cli(capsys, "profile", "dump", "--home", str(home))
    assert code == 0 and "Number(process.env.PORT)" in out  # printed verbatim, never evaluated
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert warnings == [f"warning: {layer}:6:13: {JS_PORT}", f"warning: {layer}:8:84: {JS_CHILD}"]
    assert "column 1 of the expression" in err
    code, out, _ = cli(capsys, "profile", "dump", "--home", str(home), "-f", "json")
    found = json.loads(out)["unsupportedJs"]
    assert code == 0 and [(f["message"], f["file"], f["line"], f["column"]) for f in found] == [
        (JS_PORT, str(layer), 6, 13), (JS_CHILD, str(layer), 8, 84)]


def test_dump_strict_fails_on_unsupported_js(capsys, tmp_path):
    home = make_home(tmp_path, profile_layer=JS_LAYER)
    layer = home / "profiles/web/cordis.patch.yml"
    _age(home)
    for _ in range(2):  # the second run is served from the dump cache: same verdict
        code, out, err = cli(capsys, "profile", "dump", "--home", str(home), "--strict")
        assert code == 1 and out == ""
        assert f"dshctl: error: {layer}:6:13: {JS_PORT} (and 1 more" in err
        assert len(list((tmp_path / "cache").glob("*.json"))) == 1
    supported = make_home(tmp_path / "ok", profile_layer=JS_LAYER.replace("Number(process.env.PORT)", "3080")
                          .replace("require('x')", "false"))
    code, _, err = cli(capsys, "profile", "dump", "--home", str(supported), "--strict")
    assert code == 0 and err == ""


def test_default_only_and_patch(capsys, tmp_path):
    home = make_home(tmp_path, profile_layer="- {id: a, x: 1}\n")
    extra = write(tmp_path / "extra.yml", "- {id: a, y: 2}\n")
    _, out, _ = cli(capsys, "profile", "dump", "--home", str(home), "--default-only", "-f", "json")
    assert json.loads(out)["rows"] == [{"id": "a", "name": "A"}]
    _, out, _ = cli(capsys, "profile", "dump", "--home", str(home), "--patch", str(extra), "-f", "json")
    assert json.loads(out)["rows"] == [{"id": "a", "name": "A", "x": 1, "y": 2}]
    # As dsh's --dump-default-config, the bundle-only dump refuses a --patch instead of dropping it.
    code, out, err = cli(capsys, "profile", "dump", "--home", str(home), "--default-only", "--patch", str(extra))
    assert (code, out) == (2, "")
    assert err.startswith("dshctl: error: --default-only prints the bundle layers and takes no --patch\n")


def test_file_errors_are_one_line_with_location(capsys, tmp_path):
    home = make_home(tmp_path, profile_layer="- {id: a}\n- plain\n")
    code, out, err = cli(capsys, "profile", "dump", "--home", str(home))
    layer = home / "profiles/web/cordis.patch.yml"
    assert code == 1 and out == ""
    assert err.splitlines()[0] == (f"dshctl: error: {layer}:2:3: overlay entry 2 in {layer} must be a "
                                   "mapping (a loader patch entry)")
    assert "Traceback" not in err


def test_bad_format_is_usage_error(capsys, demo):
    code, _, _ = cli(capsys, "profile", "dump", "--home", str(demo), "--format", "xml")
    assert code == 2


# ---------------------------------------------------------------------------------------------
# explain


def test_explain_field_lists_layers_values_and_winner(capsys, demo):
    code, out, _ = cli(capsys, "profile", "explain", "http.config.port", "--home", str(demo), "-f", "json")
    data = json.loads(out)
    assert code == 0 and data["final"] == 9090
    steps = data["steps"]
    assert [s["value"] for s in steps] == [8787, 9090]
    assert steps[0]["layer"] == "@dshctl/host-base" and steps[-1]["winner"] is True
    assert steps[-1]["file"].endswith("profiles/web/cordis.patch.yml") and steps[-1]["line"] == 10


def test_explain_disabled_row_names_the_layer(capsys, demo):
    _, out, _ = cli(capsys, "profile", "explain", "echo-lower", "--home", str(demo))
    assert "state: disabled by " + str(demo / "profiles/web/cordis.patch.yml") in out


def test_explain_group_ancestor_disabled(capsys, demo):
    with open(demo / "profiles/web/cordis.patch.yml", "a", encoding="utf-8") as fh:
        fh.write("- id: echoes\n  disabled: true\n")
    _, out, _ = cli(capsys, "profile", "explain", "echo-upper", "--home", str(demo))
    assert "group ancestor 'echoes' is disabled" in out


def test_explain_unknown_row_suggests(capsys, demo):
    code, _, err = cli(capsys, "profile", "explain", "greeterr", "--home", str(demo))
    assert code == 1 and 'did you mean "greeter"?' in err


def test_explain_a_patch_that_targets_nothing_suggests(capsys, tmp_path):
    home = make_home(tmp_path, bundles={"base": "- insert: [{id: http-server, name: H}]\n"},
                     profile_layer="- id: http-servr\n  disabled: true\n")
    code, out, _ = cli(capsys, "profile", "explain", "http-servr", "--home", str(home))
    assert code == 0
    assert 'patch: entry "http-servr" not found; did you mean "http-server"?' in out
    assert "not in the composed tree" in out


def test_explain_shows_skipped_patch(capsys, tmp_path):
    home = make_home(tmp_path, profile_layer="- {id: a, name: WRONG, x: 1}\n")
    _, out, _ = cli(capsys, "profile", "explain", "a", "--home", str(home))
    assert 'name mismatch for "a" (expected "A", got "WRONG")' in out


# ---------------------------------------------------------------------------------------------
# diff


def test_diff_between_profiles(capsys, tmp_path):
    home = make_home(tmp_path, bundles={"b": "- insert: [{id: a, name: A, config: {p: 1}}, {id: b, name: B}]\n"})
    pdir = home / "profiles"
    shutil.copytree(pdir / "web", pdir / "alt")
    write(pdir / "alt/cordis.patch.yml", "- {id: a, config: {p: 2, q: 3}}\n- {id: b, disabled: true}\n"
                                        "- insert: [{id: c, name: C}]\n")
    code, out, _ = cli(capsys, "profile", "diff", "web", "alt", "--home", str(home), "-f", "json")
    changes = {c["id"]: c for c in json.loads(out)["changes"]}
    assert code == 0
    assert changes["b"]["changes"] == ["disabled"] and changes["c"]["changes"] == ["added"]
    fields = {(f["path"], f["change"]) for f in changes["a"]["fields"]}
    assert fields == {("config.p", "changed"), ("config.q", "added")}
    code, out, _ = cli(capsys, "profile", "diff", "web", "alt", "--home", str(home), "--exit-code")
    assert code == 1 and "~ a: config changed" in out


@pytest.mark.parametrize("nested", [False, True])
def test_diff_against_a_git_revision(capsys, tmp_path, nested):
    """The home is the repository, or a directory inside one (as examples/home is)."""
    home = make_home(tmp_path / "repo" / "homes" if nested else tmp_path,
                     profile_layer="- {id: a, x: 1}\n")
    top = tmp_path / "repo" if nested else home
    git = ["git", "-C", str(top), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", str(home / "profiles/web/package.json"),
                          str(home / "profiles/web/cordis.patch.yml")], check=True)
    subprocess.run(git + ["commit", "-qm", "one"], check=True)
    write(home / "profiles/web/cordis.patch.yml", "- {id: a, x: 2}\n")
    code, out, _ = cli(capsys, "profile", "diff", "git:HEAD", "web", "--home", str(home), "-f", "json")
    (change,) = json.loads(out)["changes"]
    assert code == 0 and change["id"] == "a"
    assert change["fields"] == [{"path": "x", "change": "changed", "old": 1, "new": 2}]
    code, _, err = cli(capsys, "profile", "diff", "git:nosuchrev", "web", "--home", str(home))
    assert code == 1
    assert err.splitlines()[0] == (f"dshctl: error: {home}: unknown git revision 'nosuchrev' in the "
                                   "repository of the home")


def test_diff_git_side_outside_a_repository_is_one_clear_error(capsys, tmp_path):
    home = make_home(tmp_path)
    code, out, err = cli(capsys, "profile", "diff", "git:HEAD", "web", "--home", str(home))
    assert code == 1 and out == "" and "Traceback" not in err
    assert err.startswith(f"dshctl: error: {home}: git rev-parse --is-inside-work-tree failed: ")
    assert "not a git repository" in err


# ---------------------------------------------------------------------------------------------
# list and init


def test_list_reports_bundles_and_broken_layers(capsys, tmp_path):
    home = make_home(tmp_path, profile_layer="")
    make_home(tmp_path, profile="ok")  # same home dir: adds a second profile
    code, out, _ = cli(capsys, "profile", "list", "--home", str(home), "-f", "json")
    profiles = {p["name"]: p for p in json.loads(out)["profiles"]}
    assert code == 0 and profiles["ok"]["ok"] is True and profiles["ok"]["bundles"] == 1
    assert profiles["web"]["ok"] is False
    assert "must be a top-level YAML array" in [x for x in profiles["web"]["layers"] if not x["ok"]][0]["error"]
    _, text, _ = cli(capsys, "profile", "list", "--home", str(home))
    assert "BROKEN" in text and "ok" in text


def test_init_default_template_composes(capsys, tmp_path):
    home = tmp_path / "home"
    code, out, _ = cli(capsys, "profile", "init", "mine", "--home", str(home))
    assert code == 0 and "initialized profile mine" in out
    manifest = json.loads((home / "profiles/mine/package.json").read_text())
    assert manifest == {"name": "dsh-profile-mine", "private": True, "dependencies": {},
                        "dsh": {"profile": {"bundles": ["@dshctl/host-base"]}}}
    layer = (home / "profiles/mine/cordis.patch.yml").read_text().splitlines()
    assert [line.startswith("#") for line in layer] == [True, True, True, False] and layer[3] == "[]"
    code, out, _ = cli(capsys, "profile", "dump", "--home", str(home), "--profile", "mine", "-f", "json")
    assert [r["id"] for r in json.loads(out)["rows"]][0] == "logger"
    code, _, err = cli(capsys, "profile", "init", "mine", "--home", str(home))
    assert code == 1 and "already exists" in err


def test_init_from_another_profile_copies_manifest_and_layer(capsys, demo):
    (demo / "profiles/web/dshctl.lock.json").write_text('{"lockfileVersion": 1, "packages": {}}\n')
    code, _, err = cli(capsys, "profile", "init", "copy", "--from", "web", "--home", str(demo))
    assert code == 0
    # web's demo bundles live in web's node_modules only: say so, and how to install them
    assert "not installed in copy yet: @demo/greeter, @demo/assistant" in err
    # they are not in the lock either, so `install` cannot bring them (issue 14): say what can
    assert "are not in the lock: add them with 'dshctl plugin --profile copy add <git url>'" in err
    assert (demo / "profiles/copy/dshctl.lock.json").read_text() == \
        (demo / "profiles/web/dshctl.lock.json").read_text()
    assert (demo / "profiles/copy/cordis.patch.yml").read_text() == \
        (demo / "profiles/web/cordis.patch.yml").read_text()
    assert json.loads((demo / "profiles/copy/package.json").read_text())["name"] == "dsh-profile-copy"


@pytest.mark.parametrize("name", ["..", "node_modules", "a/b"])
def test_init_rejects_bad_names(capsys, tmp_path, name):
    code, _, err = cli(capsys, "profile", "init", name, "--home", str(tmp_path))
    assert code == 1 and "invalid profile name" in err


def test_python_dash_m_entry_point_runs():
    proc = subprocess.run([sys.executable, "-m", "dshctl", "--home", str(EXAMPLE), "profile", "list"],
                          capture_output=True, text=True, check=False, cwd=REPO)
    assert proc.returncode == 0 and "web" in proc.stdout


# ---------------------------------------------------------------------------------------------
# the dump cache


def _age(root: Path, seconds: int = 60) -> None:
    past = time.time() - seconds
    for p in [root, *root.rglob("*")]:
        os.utime(p, (past, past), follow_symlinks=False)


def test_dump_cache_hits_and_invalidates_on_every_input(capsys, tmp_path):
    home = make_home(tmp_path, profile_layer="- {id: a, x: 1}\n")
    _age(home)
    _, first, _ = cli(capsys, "profile", "dump", "--home", str(home))
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1
    _, again, _ = cli(capsys, "profile", "dump", "--home", str(home))
    assert again == first and "x: 1" in first
    write(home / "profiles/web/cordis.patch.yml", "- {id: a, x: 2}\n")  # same size, new content
    _age(home, 30)
    _, changed, _ = cli(capsys, "profile", "dump", "--home", str(home))
    assert "x: 2" in changed
    write(home / "cordis.patch.yml", "- {id: a, y: 3}\n")  # a user layer appears
    _age(home, 20)
    _, more, _ = cli(capsys, "profile", "dump", "--home", str(home))
    assert "'y': 3" in more


def test_dump_cache_invalidates_on_bundle_patch_and_patch_file_changes(capsys, tmp_path):
    home = make_home(tmp_path)
    extra = write(tmp_path / "extra.yml", "- {id: a, p: 1}\n")
    _age(home)
    os.utime(extra, (time.time() - 60, time.time() - 60))
    _, first, _ = cli(capsys, "profile", "dump", "--home", str(home), "--patch", str(extra))
    assert "p: 1" in first and len(list((tmp_path / "cache").glob("*.json"))) == 1
    write(extra, "- {id: a, p: 2}\n")
    os.utime(extra, (time.time() - 30, time.time() - 30))
    _, out, _ = cli(capsys, "profile", "dump", "--home", str(home), "--patch", str(extra))
    assert "p: 2" in out
    write(home / "profiles/web/node_modules/base/cordis.patch.yml", "- insert: [{id: b, name: B}]\n")
    _age(home, 20)
    _, out, _ = cli(capsys, "profile", "dump", "--home", str(home), "--patch", str(extra))
    assert "id: b" in out and "id: a" not in out


def test_dump_cache_sees_a_package_appearing_earlier_in_resolution(capsys, tmp_path):
    from profile_helpers import make_bundle

    home = make_home(tmp_path, bundles={})
    write(home / "profiles/web/package.json", json.dumps({"dsh": {"profile": {"bundles": ["shared"]}}}))
    make_bundle(home / "profiles/node_modules", "shared", "- insert: [{id: fallback, name: F}]\n")
    _age(home)
    _, out, _ = cli(capsys, "profile", "dump", "--home", str(home))
    assert "fallback" in out
    make_bundle(home / "profiles/web/node_modules", "shared", "- insert: [{id: local, name: L}]\n")
    _age(home, 30)
    _, out, _ = cli(capsys, "profile", "dump", "--home", str(home))
    assert "local" in out and "fallback" not in out


def test_fresh_inputs_are_not_cached(capsys, tmp_path):
    home = make_home(tmp_path)
    cli(capsys, "profile", "dump", "--home", str(home))
    assert not list((tmp_path / "cache").glob("*.json"))


def test_cache_can_be_disabled(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DSHCTL_CACHE", "0")
    home = make_home(tmp_path)
    _age(home)
    cli(capsys, "profile", "dump", "--home", str(home))
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("extra", [
    [], ["-f", "json"], ["--strict"], ["-f", "json", "--strict"], ["--default-only"], ["-f", "toml"],
    ["--profile", "nosuch"], ["--patch", "missing.yml"], ["--bundle-root", "nowhere"],
])
def test_dump_on_the_fast_path_says_what_typer_says(capsys, monkeypatch, tmp_path, extra):
    """`profile dump` runs without typer (cli/fastpath.py); output, messages and exit codes are the
    same either way, warnings and errors included."""
    from dshctl.cli import fastpath

    home = make_home(tmp_path, profile_layer=JS_LAYER + "- {id: nosuch-row, x: 1}\n")
    monkeypatch.chdir(tmp_path)
    args = ["--no-cache", "--home", str(home), "profile", "dump", *extra]
    assert fastpath._parse(args)[0].__module__ == "dshctl.cli.profile_dump"  # the fast path takes it
    fast = cli(capsys, *args)
    monkeypatch.setenv("DSHCTL_FASTPATH", "0")
    assert cli(capsys, *args) == fast
    assert fast[0] in (0, 1, 2)
