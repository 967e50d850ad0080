"""`dshctl profile disable|enable|set|unset|insert`: kept comments, refused edits, atomicity, races."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from dshctl.cli.app import main
from dshctl.core.compose import edit
from dshctl.core.compose.composition import compose_profile
from dshctl.core.yaml.dialect import load_yaml
from dshctl.errors import DshctlError
from profile_helpers import make_home, write
from demo_home import copy_demo_home

REPO = Path(__file__).resolve().parent.parent


def cli(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.fixture
def demo(tmp_path) -> Path:
    home = tmp_path / "home"
    copy_demo_home(home)
    return home


def layer(home: Path) -> Path:
    return home / "profiles/web/cordis.patch.yml"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows(home: Path) -> dict:
    return {r["id"]: r for r in compose_profile(home, "web").rows}


# ---------------------------------------------------------------------------------------------
# the edits


def test_disable_appends_a_patch_and_keeps_comments(capsys, demo):
    before = layer(demo).read_text()
    code, out, _ = cli(capsys, "profile", "disable", "tools", "--home", str(demo))
    after = layer(demo).read_text()
    assert code == 0 and after.startswith(before.rstrip("\n"))
    assert after.endswith("- id: tools\n  disabled: true\n")
    assert rows(demo)["tools"]["disabled"] is True


def test_enable_updates_the_existing_patch_instead_of_appending(capsys, demo):
    code, _, _ = cli(capsys, "profile", "enable", "echo-lower", "--home", str(demo))
    text = layer(demo).read_text()
    assert code == 0 and text.count("id: echo-lower") == 1 and "disabled: false" in text
    assert "# Turn one echo row off" in text
    echoes = {c["id"]: c for c in rows(demo)["echoes"]["config"]}
    assert echoes["echo-lower"]["disabled"] is False


def test_set_writes_the_whole_config_and_says_so(capsys, demo):
    code, out, _ = cli(capsys, "profile", "set", "greeter.config.style.color", "blue", "--home", str(demo),
                       "--home-layer")
    assert code == 0 and "dsh replaces config whole" in out
    home_layer = load_yaml((demo / "cordis.patch.yml").read_text(), "h").value
    assert [p for p in home_layer if p["id"] == "greeter"] == [
        {"id": "greeter", "config": {"greeting": "Hello from the home layer", "repeat": 2,
                                     "style": {"color": "blue"}}}]
    assert rows(demo)["greeter"]["config"]["style"] == {"color": "blue"}


def test_set_parses_values_in_the_dialect(capsys, demo):
    cli(capsys, "profile", "set", "http.config.port", "9191", "--home", str(demo))
    cli(capsys, "profile", "set", "http.config.host", "!!js process.env.HOST", "--home", str(demo))
    cfg = rows(demo)["http"]["config"]
    assert cfg["port"] == 9191 and cfg["host"].expr == "process.env.HOST"
    assert layer(demo).read_text().count("id: http") == 1


def test_unset_removes_one_field(capsys, demo):
    code, _, _ = cli(capsys, "profile", "unset", "http.config.host", "--home", str(demo))
    assert code == 0 and rows(demo)["http"]["config"] == {"port": 9090}
    code, _, err = cli(capsys, "profile", "unset", "http.config.nothing", "--home", str(demo))
    assert code == 1 and "is not set" in err


def test_edit_shadowed_by_the_home_layer_says_so(capsys, demo):
    _, out, _ = cli(capsys, "profile", "set", "greeter.config.repeat", "5", "--home", str(demo))
    assert "a later layer overrides greeter.config.repeat" in out


def test_insert_rows_into_a_group(capsys, demo, tmp_path):
    new = write(tmp_path / "rows.yml", "- id: echo-title\n  name: '@demo/greeter/echo'\n")
    code, _, _ = cli(capsys, "profile", "insert", "--file", str(new), "--into", "echoes", "--home", str(demo))
    assert code == 0
    assert [c["id"] for c in rows(demo)["echoes"]["config"]] == ["echo-upper", "echo-lower", "echo-title"]


def test_missing_user_layer_is_created_from_the_template(capsys, tmp_path):
    home = make_home(tmp_path)
    code, out, _ = cli(capsys, "profile", "disable", "a", "--home", str(home))
    text = layer(home).read_text()
    assert code == 0 and "(created)" in out
    assert [line.startswith("#") for line in text.splitlines()[:3]] == [True] * 3
    assert load_yaml(text, "x").value == [{"id": "a", "disabled": True}]


# ---------------------------------------------------------------------------------------------
# refused edits leave the file untouched


def test_duplicate_id_insert_is_refused(capsys, demo, tmp_path):
    before = digest(layer(demo))
    dup = write(tmp_path / "rows.yml", "- id: echo-lower\n  name: x\n")
    code, _, err = cli(capsys, "profile", "insert", "--file", str(dup), "--home", str(demo))
    assert code == 1 and "duplicate loader entry id: echo-lower" in err
    assert digest(layer(demo)) == before


def test_schema_failure_is_refused(capsys, demo):
    before = digest(layer(demo))
    code, _, err = cli(capsys, "profile", "set", "tools.name", "x", "--home", str(demo))
    assert code == 1  # name is a guard, never set
    code, _, err = cli(capsys, "profile", "set", "tools.inject", "5", "--home", str(demo))
    assert code == 1 and "fail to boot" in err
    assert digest(layer(demo)) == before


def test_unknown_row_is_refused_with_suggestion(capsys, demo):
    before = digest(layer(demo))
    code, _, err = cli(capsys, "profile", "disable", "greter", "--home", str(demo))
    assert code == 1 and 'did you mean "greeter"?' in err and digest(layer(demo)) == before


def test_insert_into_a_non_group_is_refused(capsys, demo, tmp_path):
    new = write(tmp_path / "rows.yml", "- id: z\n  name: z\n")
    code, _, err = cli(capsys, "profile", "insert", "--file", str(new), "--into", "http", "--home", str(demo))
    assert code == 1 and "is not a group" in err


def test_a_broken_layer_is_not_edited(capsys, tmp_path):
    home = make_home(tmp_path, profile_layer="# only a comment\n")
    code, _, err = cli(capsys, "profile", "disable", "a", "--home", str(home))
    assert code == 1 and "must be a top-level YAML array" in err
    assert layer(home).read_text() == "# only a comment\n"


def test_file_changed_since_read_is_refused(demo):
    """Another editor saves between our read and our write: refuse, keep their version."""
    theirs = "# saved by an editor\n[]\n"

    def change(doc, comp):
        doc.append_item((), {"id": "tools", "disabled": True})
        layer(demo).write_text(theirs)  # the concurrent save
        return "x", ""

    with pytest.raises(DshctlError) as exc:
        edit.edit_layer(demo, "web", False, change)
    assert "changed on disk since it was read" in exc.value.message
    assert layer(demo).read_text() == theirs


def test_crash_during_write_leaves_the_old_file(demo, monkeypatch):
    before = layer(demo).read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        edit.set_disabled(demo, "web", "tools", True)
    assert layer(demo).read_bytes() == before
    assert not [p for p in layer(demo).parent.iterdir() if p.name.endswith(".tmp")]


# ---------------------------------------------------------------------------------------------
# two processes at once


def test_two_processes_editing_the_same_layer_lose_nothing(tmp_path):
    n = 6
    bundle = "- insert:\n" + "".join(f"    - {{id: r{i}, name: R}}\n" for i in range(2 * n))
    home = make_home(tmp_path, bundles={"base": bundle}, profile_layer="# mine\n[]\n")
    exe = str(REPO / ".venv/bin/dshctl")
    procs = [subprocess.Popen(["sh", "-c", _script(exe, home, k, n)]) for k in (0, 1)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    text = layer(home).read_text()
    patches = load_yaml(text, "x").value
    assert text.startswith("# mine\n")
    assert sorted(p["id"] for p in patches) == sorted(f"r{i}" for i in range(2 * n))
    assert all(p["disabled"] is True for p in patches)


def _script(exe: str, home: Path, k: int, n: int) -> str:
    ids = [f"r{2 * i + k}" for i in range(n)]
    return " && ".join(f"{exe} --home {home} profile disable {row} >/dev/null" for row in ids)


def test_json_output_of_an_edit(capsys, demo):
    code, out, _ = cli(capsys, "profile", "disable", "tools", "--home", str(demo), "-f", "json")
    data = json.loads(out)
    assert code == 0 and data["file"] == str(layer(demo)) and data["created"] is False


def test_edits_keep_their_locks_under_dshctl_never_beside_the_layer(capsys, demo):
    for args in (("profile", "disable", "tools"), ("profile", "enable", "tools", "--home-layer")):
        code, _, err = cli(capsys, *args, "--home", str(demo))
        assert code == 0, err
    stray = [p for p in demo.rglob("*.lock") if ".dshctl" not in p.relative_to(demo).parts]
    assert stray == []
    assert sorted(p.name for p in (demo / ".dshctl" / "locks").iterdir()) == ["layer-home.lock", "layer-web.lock"]
