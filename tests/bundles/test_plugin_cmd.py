"""`dshctl plugin …` end to end through the CLI entry point."""
from __future__ import annotations

import json

import pytest

from .conftest import cli, snapshot
from demo_home import copy_demo_home


def test_profile_option_before_and_after_the_verb(home, repos, capsys):
    src = repos("one")
    src.bundle("dsh-one")
    code, out, err = cli(capsys, "plugin", "--profile", "work", "add", src.url)
    assert code == 0, err
    assert "initialized profile work at" in out and "dsh-one" in out
    assert "a running host picks up bundle changes only on restart" in out
    assert (home / "profiles/work/node_modules/dsh-one").is_dir()
    code, out, _ = cli(capsys, "plugin", "list", "--profile", "work", "--format", "json")
    names = [p["name"] for p in json.loads(out)["packages"]]
    assert code == 0 and names == ["@dshctl/host-base", "dsh-one"]
    other = home.parent / "other-home"
    code, out, err = cli(capsys, "plugin", "--home", str(other), "--profile", "x", "add", src.url)
    assert code == 0 and (other / "profiles/x/package.json").is_file()


def test_summary_table_and_json_outcome(home, repos, capsys):
    src = repos("tbl")
    commit = src.bundle("dsh-tbl")
    code, out, _ = cli(capsys, "plugin", "add", src.url + "#main", "--format", "json")
    data = json.loads(out)
    change = data["changes"][0]
    assert (change["name"], change["commit"], change["position"], change["action"]) == \
        ("dsh-tbl", commit, 2, "added")


def test_why_and_verify(home, repos, capsys):
    src = repos("v")
    commit = src.bundle("dsh-v")
    cli(capsys, "plugin", "add", src.url)
    code, out, _ = cli(capsys, "plugin", "why", "dsh-v", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["position"] == 2 and data["lock"]["commit"] == commit
    code, out, _ = cli(capsys, "plugin", "verify", "--format", "json")
    assert code == 0 and json.loads(out)["ok"] is True
    (home / "profiles/web/node_modules/dsh-v/cordis.patch.yml").write_text("[]\n")
    (home / "profiles/web/node_modules/dsh-v/extra.js").write_text("evil()\n")
    code, out, _ = cli(capsys, "plugin", "verify", "--format", "json")
    pkg = json.loads(out)["packages"][0]
    assert code == 1 and pkg["status"] == "modified"
    assert pkg["files"] == {"modified": ["cordis.patch.yml"], "added": ["extra.js"]}
    code, out, _ = cli(capsys, "plugin", "verify")
    assert code == 1 and "modified: cordis.patch.yml" in out
    code, _, err = cli(capsys, "plugin", "why", "nothing-here")
    assert code == 1 and "nothing-here is not part of profile web" in err


def test_dry_run_writes_nothing(home, repos, capsys):
    src = repos("dry")
    src.bundle("dsh-dry")
    code, out, _ = cli(capsys, "plugin", "add", "--dry-run", src.url)
    assert code == 0 and "dry run" in out and not (home / "profiles").exists()
    cli(capsys, "plugin", "add", src.url)
    before = snapshot(home / "profiles")
    src.bundle("dsh-dry", greeting="newer")
    for args in (("update", "--dry-run"), ("remove", "--dry-run", "dsh-dry")):
        code, out, _ = cli(capsys, "plugin", *args)
        assert code == 0 and "dry run" in out
        assert snapshot(home / "profiles") == before


def test_update_shows_the_composed_change_before_applying(home, repos, capsys):
    src = repos("up")
    src.bundle("dsh-up", greeting="hello", row="greeter")
    cli(capsys, "plugin", "add", src.url + "#main")
    src.bundle("dsh-up", greeting="bonjour", row="greeter")
    code, out, _ = cli(capsys, "plugin", "update")
    assert code == 0
    assert out.index("greeter") < out.index("updated")  # the preview comes first
    assert "config.greeting" in out
    code, out, _ = cli(capsys, "plugin", "update", "--format", "json")
    assert json.loads(out)["changes"][0]["action"] == "unchanged"


def test_errors_are_one_line_with_hint(home, repos, capsys):
    code, _, err = cli(capsys, "plugin", "add", "ext::sh -c id")
    assert code == 1 and err.startswith("dshctl: error: refusing spec") and "hint:" in err
    assert "Traceback" not in err
    code, _, err = cli(capsys, "plugin", "remove", "nope")
    assert code == 1 and "nope is not installed" in err
    code, _, err = cli(capsys, "plugin", "list", "--format", "xml")
    assert code == 2


def test_profile_dump_shows_the_added_bundle_layer(home, repos, capsys):
    src = repos("dump")
    src.bundle("dsh-dump", greeting="from-git", row="dumped-row")
    cli(capsys, "plugin", "add", src.url)
    code, out, err = cli(capsys, "profile", "dump", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    ids = [row.get("id") for row in data["rows"]]
    assert ids[-1] == "dumped-row" and len(ids) > 1  # after the host-base rows: layer 2 in place
    assert data["rows"][-1]["config"] == {"greeting": "from-git"}
    labels = [layer["label"] for layer in data["layers"]]
    assert labels[:2] == ["@dshctl/host-base", "dsh-dump"]
    assert data["layers"][1]["path"] == str(home / "profiles/web/node_modules/dsh-dump/cordis.patch.yml")


def test_home_and_profile_after_the_verb_and_every_flag(home, repos, capsys):
    other = home.parent / "elsewhere"
    src = repos("flags")
    commit = src.bundle("dsh-flags", peerDependencies={"@deepseek-ai/dsh": ">=9"})
    where = ("--home", str(other), "--profile", "late")
    code, _, err = cli(capsys, "plugin", "add", src.url, *where)
    assert code == 1 and "'>=9'" in err and "--force" in err
    code, out, _ = cli(capsys, "plugin", "add", src.url, "--force", *where, "--format", "json")
    assert code == 0 and json.loads(out)["changes"][0]["forced"] is True
    assert (other / "profiles/late/node_modules/dsh-flags").is_dir()
    assert not (home / "profiles").exists()  # --home after the verb beat DSH_HOME
    plain = repos("plain")
    plain.commit({"package.json": json.dumps({"name": "plainpkg", "version": "2.0.0"})})
    code, _, err = cli(capsys, "plugin", "add", plain.url, *where)  # as dsh: a warning, no flag
    assert code == 0 and "declares no dsh.bundle" in err
    code, _, err = cli(capsys, "plugin", "add", plain.url, "--allow-plain", *where)
    assert code == 0
    # --offline with a pinned commit that is stored works; an unknown ref says what is missing
    code, out, _ = cli(capsys, "plugin", "add", f"{src.url}#{commit}", "--offline",
                       "--profile", "second", "--home", str(other), "--force")
    assert code == 0 and "dsh-flags" in out
    code, _, err = cli(capsys, "plugin", "add", f"{src.url}#v9", "--offline", *where)
    assert code == 1 and "offline: no remembered commit" in err and "hint:" in err
    code, out, _ = cli(capsys, "plugin", "remove", "plainpkg", *where)
    assert code == 0 and "removed" in out
    code, out, _ = cli(capsys, "plugin", "install", *where, "--offline", "--format", "json")
    assert code == 0 and [c["action"] for c in json.loads(out)["changes"]] == ["unchanged"]


def test_dry_run_leaves_the_store_resolutions_alone(home, repos, capsys):
    src = repos("dryref")
    src.bundle("dsh-dryref")
    code, _, _ = cli(capsys, "plugin", "add", "--dry-run", src.url + "#main")
    assert code == 0 and not (home / ".dshctl/store/refs.json").exists()
    code, _, err = cli(capsys, "plugin", "add", src.url + "#main", "--offline")
    assert code == 1 and "offline: no remembered commit" in err  # the dry run remembered nothing


def test_real_cli_process_over_a_git_daemon(home, repos, git_daemon):
    """The installed `dshctl` binary, every verb, against git:// on 127.0.0.1."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).with_name("dshctl")
    src = repos("served")
    first = src.bundle("dsh-served", greeting="one")
    src.tag("v1", annotated=True)
    env = {**os.environ, "DSH_HOME": str(home), "NO_COLOR": "1"}

    def dshctl(*args):
        proc = subprocess.run([str(exe), "plugin", "--profile", "web", *args], env=env,
                              capture_output=True, text=True, timeout=120)
        assert "Traceback" not in proc.stderr
        return proc

    assert dshctl("add", f"{git_daemon}/served.git#v1").returncode == 0
    second = src.bundle("dsh-served", greeting="two")
    src.tag("v1", annotated=True)  # the tag is moved (force-pushed) to the new commit
    listed = json.loads(dshctl("list", "--format", "json").stdout)["packages"]
    assert [(p["name"], p["commit"]) for p in listed][1] == ("dsh-served", first)
    updated = dshctl("update", "--format", "json")
    assert updated.returncode == 0
    change = json.loads(updated.stdout)["changes"][0]
    assert (change["action"], change["oldCommit"], change["commit"]) == ("updated", first, second)
    assert dshctl("verify").returncode == 0
    why = dshctl("why", "dsh-served")
    assert why.returncode == 0 and "layer position 2" in why.stdout
    assert dshctl("remove", "dsh-served").returncode == 0
    assert dshctl("install").returncode == 0
    assert json.loads(dshctl("list", "--format", "json").stdout)["packages"][1:] == []


def test_on_the_demo_home_next_to_an_unlocked_bundle(repos, tmp_path, capsys, monkeypatch):
    """examples/home has a bundle installed by hand (no lock entry): add goes after it, and
    remove --dry-run still reports it as a bundle."""
    import shutil
    from pathlib import Path

    demo = tmp_path / "demo"
    copy_demo_home(demo, symlinks=True)
    monkeypatch.delenv("DSHCTL_FAULT_STEP", raising=False)
    src = repos("next")
    src.bundle("dsh-next")
    code, out, err = cli(capsys, "plugin", "--home", str(demo), "add", src.url, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["changes"][0]["position"] == 4   # after host-base, @demo/greeter and @demo/assistant
    code, out, _ = cli(capsys, "plugin", "remove", "@demo/greeter", "--dry-run", "--home", str(demo),
                       "--format", "json")
    change = json.loads(out)["changes"][0]
    assert code == 0 and (change["action"], change["bundle"]) == ("removed", True)


@pytest.mark.parametrize("bad", ["../../../../../X", "/etc/passwd", "..", "node_modules"])
@pytest.mark.parametrize("verb", ["add", "remove", "update", "install"])
def test_a_bad_profile_name_is_refused_before_anything_is_written(home, repos, capsys, tmp_path,
                                                                  bad, verb):
    src = repos("one")
    src.bundle("dsh-one")
    outside = snapshot(tmp_path)
    args = {"add": [src.url], "remove": ["dsh-one"], "update": [], "install": []}[verb]
    code, _out, err = cli(capsys, "plugin", "--profile", bad, verb, *args)
    assert code == 1 and "invalid profile name" in err and "Traceback" not in err
    assert snapshot(tmp_path) == outside  # no lock file outside the home, no directory inside it


# -- plugin add on the fast path (cli/fastpath.py, cli/plugin_run.py) -----------------------------


def _process(args, home, fast: str):
    import os
    import subprocess
    import sys

    env = {**os.environ, "DSH_HOME": str(home), "DSHCTL_FASTPATH": fast}
    return subprocess.run([sys.executable, "-m", "dshctl", *args], env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("extra", [
    [], ["--format", "json"], ["--dry-run"], ["--max-files", "1"], ["--format", "yaml"],
    ["--max-files", "0"], ["--offline"], ["--allow-plain", "--force", "--max-file-mb=0.5"],
])
def test_fast_and_typer_add_print_and_exit_alike(home, repos, extra):
    import shutil

    src = repos("twin")
    src.bundle("dsh-twin")
    args = ["plugin", "--profile", "web", "add", src.url, *extra]
    fast = _process(args, home, "1")
    fast_tree = snapshot(home / "profiles")
    shutil.rmtree(home)
    home.mkdir()
    slow = _process(args, home, "0")
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert fast_tree == snapshot(home / "profiles")
    assert "Traceback" not in fast.stderr


def test_fast_add_imports_neither_typer_click_nor_rich_when_piped(home, repos):
    import os
    import subprocess
    import sys

    src = repos("lean")
    src.bundle("dsh-lean")
    code = ("import sys\nfrom dshctl.cli.app import _run\n"
            f"rc = _run(['plugin', '--profile', 'web', 'add', {src.url!r}])\n"
            "print(rc, sorted(m for m in ('typer', 'click', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "DSH_HOME": str(home), "DSHCTL_FASTPATH": "1"})
    assert out.stdout.split("\n")[-2] == "0 []", out.stdout + out.stderr
    assert (home / "profiles/web/node_modules/dsh-lean/package.json").is_file()
