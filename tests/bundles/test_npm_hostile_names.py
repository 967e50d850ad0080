"""Hostile npm dependency names (issue 28, finding 1): nothing is written outside node_modules.

A bundle (or a packument deep in its tree) naming a dependency ``../../…`` must be refused before
anything is written, with one clear line; a profile an older dshctl left with such a lock entry
stays usable (list, remove) and ``install`` repairs it.
"""
from __future__ import annotations

import copy
import json

import pytest

from .conftest import cli, npm_bundle

ESCAPE = "../../../../../../../../../../PLANT/home/u/.ssh"


def _serve_as(registry, name: str, like: str) -> None:
    """Serve ``like``'s packument (and tarball) under the hostile ``name``."""
    doc = copy.deepcopy(registry.packuments[like])
    doc["name"] = name
    registry.packuments[name] = doc


def _planted(tmp_path):
    return [p for p in tmp_path.rglob("*") if "PLANT" in p.parts]


@pytest.mark.parametrize("name", [ESCAPE, "@scope/../../../../../../PLANT/x", "..", "a/b",
                                  "node_modules", " lib-a", "lib a", "lib%2f..", ".hidden",
                                  "_under", "@/x", "@s/", "a\\..\\..\\PLANT"])
def test_a_hostile_direct_dependency_name_is_refused_before_anything_is_written(
        home, repos, npm_env, tmp_path, capsys, name):
    npm_env.add("benign-dep", "1.0.0")
    _serve_as(npm_env, name, "benign-dep")
    src = npm_bundle(repos, "dsh-evil", {name: "1.0.0"})
    code, out, err = cli(capsys, "plugin", "add", src.url)
    assert code == 1, (code, out, err)
    assert "Traceback" not in err and "is not a valid npm package name" in err
    assert json.dumps(name)[1:-1] in err or repr(name) in err
    assert _planted(tmp_path) == []
    assert not (home / "profiles/web/node_modules/dsh-evil").exists()


def test_a_hostile_name_in_a_transitive_packument_is_refused(home, repos, npm_env, tmp_path, capsys):
    npm_env.add("benign-dep", "1.0.0")
    _serve_as(npm_env, ESCAPE, "benign-dep")
    npm_env.add("lib-sneaky", "1.0.0", deps={ESCAPE: "1.0.0"})
    src = npm_bundle(repos, "dsh-evil2", {"lib-sneaky": "^1.0.0"})
    code, out, err = cli(capsys, "plugin", "add", src.url)
    assert code == 1 and "is not a valid npm package name" in err and "lib-sneaky" in err, err
    assert _planted(tmp_path) == []


def test_old_packages_names_npm_still_installs_are_accepted(home, repos, npm_env, capsys):
    """Upper case and ~'!()* are valid for old packages (npm installs JSONStream)."""
    npm_env.add("JSONStream-like", "1.0.0")
    src = npm_bundle(repos, "dsh-old", {"JSONStream-like": "1.0.0"})
    code, out, err = cli(capsys, "plugin", "add", src.url)
    assert code == 0, err
    assert (home / "profiles/web/node_modules/dsh-old/node_modules/JSONStream-like/package.json"
            ).is_file()


def _stuck_profile(home, repos, npm_env, capsys):
    """What an older dshctl left: a lock entry whose npm path climbs out of the home."""
    npm_env.add("lib-fine", "1.0.0")
    src = npm_bundle(repos, "dsh-stuck", {"lib-fine": "1.0.0"})
    code, _, err = cli(capsys, "plugin", "add", src.url)
    assert code == 0, err
    lock_path = home / "profiles/web/dshctl.lock.json"
    lock = json.loads(lock_path.read_text())
    npm = lock["packages"]["dsh-stuck"]["npm"]
    entry = npm.pop("node_modules/lib-fine")
    npm[f"node_modules/{ESCAPE}"] = {**entry, "name": ESCAPE}
    lock_path.write_text(json.dumps(lock, indent=2))
    return src, lock_path


def test_a_stuck_profile_from_an_older_install_is_listed_and_repaired_by_install(
        home, repos, npm_env, capsys):
    _src, lock_path = _stuck_profile(home, repos, npm_env, capsys)
    code, out, err = cli(capsys, "plugin", "list", "--format", "json")
    assert code == 0, err
    assert "dsh-stuck" in [p["name"] for p in json.loads(out)["packages"]]
    assert "install" in err  # the warning says how to repair it
    code, out, err = cli(capsys, "plugin", "verify", "--format", "json")
    assert code == 1 and "Traceback" not in err, (code, out, err)
    code, out, err = cli(capsys, "plugin", "install")
    assert code == 0, err
    npm = json.loads(lock_path.read_text())["packages"]["dsh-stuck"]["npm"]
    assert list(npm) == ["node_modules/lib-fine"]
    assert (home / "profiles/web/node_modules/dsh-stuck/node_modules/lib-fine/package.json").is_file()
    code, out, err = cli(capsys, "plugin", "verify", "--format", "json")
    assert code == 0, (out, err)


def test_a_stuck_profile_can_remove_the_bundle(home, repos, npm_env, capsys):
    _stuck_profile(home, repos, npm_env, capsys)
    code, out, err = cli(capsys, "plugin", "remove", "dsh-stuck")
    assert code == 0, err
    assert not (home / "profiles/web/node_modules/dsh-stuck").exists()
    code, out, err = cli(capsys, "plugin", "list", "--format", "json")
    assert code == 0 and "dsh-stuck" not in out


@pytest.mark.parametrize("integrity", ["../../../../PLANT/x-AAAA", "sha512-AAAA", "md5-" + "A" * 24])
def test_a_lock_integrity_never_names_a_file_outside_the_store(home, repos, npm_env, tmp_path,
                                                                capsys, integrity):
    """The store key comes from the integrity string: only a real digest may become a name."""
    npm_env.add("lib-fine", "1.0.0")
    src = npm_bundle(repos, "dsh-int", {"lib-fine": "1.0.0"})
    assert cli(capsys, "plugin", "add", src.url)[0] == 0
    lock_path = home / "profiles/web/dshctl.lock.json"
    lock = json.loads(lock_path.read_text())
    lock["packages"]["dsh-int"]["npm"]["node_modules/lib-fine"]["integrity"] = integrity
    lock_path.write_text(json.dumps(lock))
    import shutil
    shutil.rmtree(home / ".dshctl/store/npm")
    code, out, err = cli(capsys, "plugin", "install")
    assert "Traceback" not in err
    assert _planted(tmp_path) == []
    assert not list(home.parent.glob("**/PLANT*"))
    # the damaged section is re-resolved from the bundle's package.json: installed again
    assert code == 0, err
    assert (home / "profiles/web/node_modules/dsh-int/node_modules/lib-fine/package.json").is_file()
