"""A profile's files cannot change the shared npm store (issue #29): edit a placed dependency in one
profile, and the store, a second profile's fresh install, `plugin verify`, `plugin install` and
`plugin store verify|prune` each behave as a user expects. Real registry on 127.0.0.1, real git."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import cli, npm_bundle

DEP = "node_modules/dsh-npm/node_modules/lib-a"
EDIT = "module.exports = 'edited in profile web';\n"


def _main_file(profile_dir: Path) -> Path:
    pkg = json.loads((profile_dir / DEP / "package.json").read_text())
    return profile_dir / DEP / (pkg.get("main") or "index.js")


@pytest.fixture
def installed(home, repos, npm_env, capsys):
    src = npm_bundle(repos, "dsh-npm", {"lib-a": "^1.0.0"})
    code, _out, err = cli(capsys, "plugin", "--profile", "web", "add", src.url)
    assert code == 0, err
    return src


def test_an_edit_in_one_profile_reaches_neither_the_store_nor_another_profile(home, installed,
                                                                             capsys):
    web = home / "profiles/web"
    target = _main_file(web)
    original = target.read_bytes()
    target.write_text(EDIT)  # as root, too: a read-only mode would not stop this write

    code, out, _ = cli(capsys, "plugin", "--profile", "web", "verify")
    assert code == 1
    rel = target.relative_to(web / "node_modules/dsh-npm").as_posix()
    assert f"modified: {rel}" in out
    code, out, _ = cli(capsys, "plugin", "store", "verify")
    assert code == 0 and "0 corrupt" in out, out  # the store did not change

    code, _out, err = cli(capsys, "plugin", "--profile", "work", "add", installed.url)
    assert code == 0, err
    assert _main_file(home / "profiles/work").read_bytes() == original

    code, out, err = cli(capsys, "plugin", "--profile", "web", "install")
    assert code == 0, err
    assert "installed" in out  # repaired, not "unchanged"
    assert target.read_bytes() == original
    code, out, _ = cli(capsys, "plugin", "--profile", "web", "verify")
    assert code == 0, out


def test_the_store_keeps_checked_tarballs_and_each_profile_its_own_files(home, installed,
                                                                        capsys):
    code, _out, err = cli(capsys, "plugin", "--profile", "work", "add", installed.url)
    assert code == 0, err
    npm = home / ".dshctl/store/npm"
    assert [p.name for p in (npm / "trees").iterdir() if p.is_dir()] == []  # records only
    assert {p.name[:-len(".json")] for p in (npm / "trees").glob("*.json")} == \
        {p.name[:-len(".tgz")] for p in (npm / "tarballs").glob("*.tgz")}
    web, work = _main_file(home / "profiles/web"), _main_file(home / "profiles/work")
    for placed in (web, work):  # the first unpacked by the cold add, the second from the tarball
        assert placed.stat().st_nlink == 1 and placed.stat().st_mode & 0o777 == 0o644
    assert web.stat().st_ino != work.stat().st_ino and web.read_bytes() == work.read_bytes()


def _old_store_tree(home: Path) -> Path:
    """What dshctl kept before it placed packages from their tarballs: each entry's tarball
    unpacked beside its record, read-only (trees/<key>/)."""
    from dshctl.bundles.limits import Limits
    from dshctl.bundles.npm.extract import extract
    from dshctl.bundles.tree import make_read_only

    npm = home / ".dshctl/store/npm"
    for tgz in (npm / "tarballs").glob("*.tgz"):
        tree = npm / "trees" / tgz.name[:-len(".tgz")]
        extract(tgz, tree, what=tgz.name, limits=Limits())
        make_read_only(tree)
    return npm / "trees"


def test_an_old_hard_linked_install_is_found_and_repaired(home, installed, capsys):
    """What an older dshctl left: a placed file hard-linked into the store's unpacked tree, both
    edited. The profile is repaired from the checked tarball; prune removes the old tree."""
    web = home / "profiles/web"
    placed = _main_file(web)
    original = placed.read_bytes()
    trees = _old_store_tree(home)
    stored = next(p for p in trees.rglob(placed.name) if p.read_bytes() == original)
    placed.unlink()
    os.link(stored, placed)
    os.chmod(stored, 0o644)
    stored.write_text(EDIT)  # through either name: the old tree and the profile change together

    code, out, _ = cli(capsys, "plugin", "--profile", "web", "verify")
    assert code == 1 and "linked:" in out and "modified:" in out
    code, out, _ = cli(capsys, "plugin", "store", "verify")
    assert code == 0 and "0 corrupt" in out, out  # tarballs and records are what counts

    code, out, err = cli(capsys, "plugin", "--profile", "web", "install")
    assert code == 0, err
    assert placed.read_bytes() == original and placed.stat().st_nlink == 1
    code, _out, _ = cli(capsys, "plugin", "--profile", "web", "verify")
    assert code == 0
    code, out, _ = cli(capsys, "plugin", "store", "prune")
    assert code == 0 and "(the unpacked copy older dshctl versions kept)" in out, out
    assert [p for p in trees.iterdir() if p.is_dir()] == [] and list(trees.glob("*.json"))
    code, _out, err = cli(capsys, "plugin", "--profile", "web", "install", "--offline")
    assert code == 0, err


def test_a_damaged_stored_tarball_is_downloaded_again_by_the_next_add(home, installed, npm_env,
                                                                     capsys):
    tarball = next((home / ".dshctl/store/npm/tarballs").glob("*.tgz"))
    good = tarball.read_bytes()
    tarball.write_bytes(good[:-7] + b"garbage")
    npm_env.requests.clear()
    code, _out, err = cli(capsys, "plugin", "--profile", "work", "add", installed.url)
    assert code == 0, err
    assert [r for r in npm_env.requests if r.startswith("/-/tarballs/")]
    assert tarball.read_bytes() == good
    code, out, _ = cli(capsys, "plugin", "--profile", "work", "verify")
    assert code == 0, out


def test_an_edited_record_is_refused_when_placing_and_repaired_by_store_verify(home, installed,
                                                                             capsys):
    meta_path = next((home / ".dshctl/store/npm/trees").glob("*.json"))
    meta = json.loads(meta_path.read_text())
    first = sorted(meta["files"])[0]
    meta["files"][first] = "f:" + "0" * 64
    meta_path.write_text(json.dumps(meta))
    code, _out, err = cli(capsys, "plugin", "--profile", "work", "add", installed.url)
    assert code == 1, err
    assert "does not unpack to the files its record names" in err
    assert "plugin store verify --repair" in err and "Traceback" not in err
    assert not (home / "profiles/work/node_modules/dsh-npm").exists()
    code, out, _ = cli(capsys, "plugin", "store", "verify")
    assert code == 1 and f"record modified: {first}" in out, out
    code, out, _ = cli(capsys, "plugin", "store", "verify", "--repair")
    assert code == 0 and "-> recorded again from its tarball" in out, out
    code, _out, err = cli(capsys, "plugin", "--profile", "work", "add", installed.url)
    assert code == 0, err


def test_store_verify_repair_and_a_missing_tarball(home, installed, capsys):
    tarball = next((home / ".dshctl/store/npm/tarballs").glob("*.tgz"))
    with open(tarball, "ab") as f:
        f.write(b"junk")
    code, out, _ = cli(capsys, "plugin", "store", "verify", "--format", "json")
    data = json.loads(out)
    assert code == 1 and not data["ok"]
    bad = [e for e in data["entries"] if not e["ok"]]
    assert [e["kind"] for e in bad] == ["npm"]
    assert "tarball does not match its integrity" in bad[0]["problems"][0]
    code, out, _ = cli(capsys, "plugin", "store", "verify", "--repair")
    assert code == 0 and "-> removed" in out
    assert not tarball.exists()
    code, out, _ = cli(capsys, "plugin", "store", "verify")
    assert code == 0 and "0 corrupt" in out
    code, _out, err = cli(capsys, "plugin", "--profile", "web", "install")  # fetches it again
    assert code == 0, err
    assert tarball.exists()


def test_prune_removes_only_what_no_lock_refers_to(home, installed, repos, capsys):
    other = npm_bundle(repos, "dsh-other", {"lib-b": "^1.0.0"})
    code, _out, err = cli(capsys, "plugin", "--profile", "work", "add", other.url)
    assert code == 0, err
    trees = home / ".dshctl/store/npm/trees"
    before = {p.name for p in trees.glob("*.json")}
    code, out, _ = cli(capsys, "plugin", "store", "prune")
    assert code == 0 and "removed 0 store entries" in out
    code, _out, err = cli(capsys, "plugin", "--profile", "work", "remove", "dsh-other")
    assert code == 0, err
    code, out, _ = cli(capsys, "plugin", "store", "prune", "--dry-run")
    assert "would remove npm lib-b@" in out and {p.name for p in trees.glob("*.json")} == before
    code, out, _ = cli(capsys, "plugin", "store", "prune")
    assert code == 0 and "removed npm lib-b@" in out and "removed git" in out
    after = {p.name for p in trees.glob("*.json")}
    assert after < before
    assert not list((home / ".dshctl/store/npm/tmp").glob("npm-prune-*"))
    # web still installs offline from what was kept
    code, _out, err = cli(capsys, "plugin", "--profile", "web", "install", "--offline")
    assert code == 0, err
    code, _out, _ = cli(capsys, "plugin", "--profile", "web", "verify")
    assert code == 0


def test_prune_waits_for_a_running_install(home, installed, capsys):
    from dshctl.bundles.store_admin import prune
    from dshctl.bundles.transaction import store_use_lock
    from dshctl.errors import DshctlError

    with store_use_lock(home):  # what every install holds while it runs
        with pytest.raises(DshctlError, match="a prune or an install is running"):
            prune(home, lock_timeout=0.2)
    assert prune(home).kept >= 1


def test_prune_refuses_when_a_lock_is_unreadable(home, installed, capsys):
    (home / "profiles/web/dshctl.lock.json").write_text("{not json")
    code, _out, err = cli(capsys, "plugin", "store", "prune")
    assert code != 0 and "cannot prune: the lock of profile web is unreadable" in err
    assert "Traceback" not in err
    assert list((home / ".dshctl/store/npm/trees").glob("*.json"))


def test_an_entry_stored_before_digests_were_recorded_is_checked_from_its_tarball(home, installed,
                                                                                   capsys):
    for meta_path in (home / ".dshctl/store/npm/trees").glob("*.json"):
        meta = json.loads(meta_path.read_text())
        del meta["files"]  # as an older dshctl wrote it
        meta_path.write_text(json.dumps(meta))
    target = _main_file(home / "profiles/web")
    target.write_text(EDIT)
    code, out, _ = cli(capsys, "plugin", "--profile", "web", "verify")
    assert code == 1 and "modified:" in out
    code, out, _ = cli(capsys, "plugin", "store", "verify")
    assert code == 0 and "0 corrupt" in out


def test_a_damaged_git_tree_in_the_store_is_reported_and_fetched_again(home, installed, capsys):
    packages = home / ".dshctl/store/packages"
    meta = next(packages.glob("*.json"))
    patch = meta.with_suffix("") / "cordis.patch.yml"
    os.chmod(patch, 0o644)
    patch.write_text("- insert: []\n")
    code, out, _ = cli(capsys, "plugin", "store", "verify")
    bad = [line for line in out.splitlines() if line.startswith("corrupt")]
    assert code == 1 and len(bad) == 1
    assert bad[0].startswith("corrupt  git ") and "modified: cordis.patch.yml" in bad[0]
    code, out, _ = cli(capsys, "plugin", "store", "verify", "--repair")
    assert code == 0 and "-> removed" in out and not meta.exists()
    code, _out, err = cli(capsys, "plugin", "--profile", "web", "install")
    assert code == 0, err
    assert meta.exists() and patch.read_text() != "- insert: []\n"
    code, out, _ = cli(capsys, "plugin", "store", "verify")
    assert code == 0 and "0 corrupt" in out


def test_prunes_racing_real_installs_never_break_one(home, installed, repos):
    """Real dshctl processes: adds into new profiles while prunes run; every add succeeds and
    every profile verifies (a prune never takes an entry an install found and is placing)."""
    import subprocess
    import sys

    exe = str(Path(sys.executable).with_name("dshctl"))
    env = {**os.environ, "DSH_HOME": str(home), "NO_COLOR": "1"}
    other = npm_bundle(repos, "dsh-other", {"lib-b": "^1.0.0", "lib-c": "^1.0.0"})
    procs = []
    for i in range(3):
        procs.append(subprocess.Popen([exe, "plugin", "--profile", f"race{i}", "add",
                                       other.url if i % 2 else installed.url], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        procs.append(subprocess.Popen([exe, "plugin", "store", "prune"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, (proc.args, out, err)
        assert "Traceback" not in err
    for profile in ["web", "race0", "race1", "race2"]:
        check = subprocess.run([exe, "plugin", "--profile", profile, "verify"], env=env,
                               capture_output=True, text=True, timeout=120)
        assert check.returncode == 0, (profile, check.stdout, check.stderr)
    check = subprocess.run([exe, "plugin", "store", "verify"], env=env, capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 0 and "0 corrupt" in check.stdout


def test_verify_is_clean_after_optional_packages_were_skipped_and_with_a_scoped_esm_tree(
        home, repos, npm_env, capsys):
    src = npm_bundle(repos, "dsh-opt", {"needs-optional": "^1.0.0", "@scope/esm": "^1.0.0"})
    code, _out, err = cli(capsys, "plugin", "--profile", "opt", "add", src.url)
    assert code == 0, err
    code, out, _ = cli(capsys, "plugin", "--profile", "opt", "verify")
    assert code == 0, out
    code, out, _ = cli(capsys, "plugin", "--profile", "opt", "install")
    assert code == 0 and "unchanged" in out and "installed" not in out


def test_an_edited_git_npm_dependency_is_found_and_repaired(home, repos, npm_env, capsys):
    dep = repos("gitdep")
    dep.commit({"package.json": json.dumps({"name": "gitdep", "version": "0.3.0",
                                            "main": "index.js"}),
                "index.js": "module.exports = 'gitdep';\n"})
    src = npm_bundle(repos, "dsh-gd", {"gitdep": f"git+{dep.url}", "lib-a": "^1.0.0"})
    code, _out, err = cli(capsys, "plugin", "--profile", "web", "add", src.url)
    assert code == 0, err
    code, out, _ = cli(capsys, "plugin", "--profile", "web", "verify")
    assert code == 0, out
    placed = home / "profiles/web/node_modules/dsh-gd/node_modules/gitdep/index.js"
    placed.write_text(EDIT)
    code, out, _ = cli(capsys, "plugin", "--profile", "web", "verify")
    assert code == 1 and "modified: node_modules/gitdep/index.js" in out
    code, _out, err = cli(capsys, "plugin", "--profile", "web", "install")
    assert code == 0, err
    assert placed.read_text() == "module.exports = 'gitdep';\n"


def test_store_commands_on_a_home_without_a_store_write_nothing(tmp_path, capsys):
    """A mistyped --home: verify and prune report an empty store and leave no directory or lock behind."""
    home = tmp_path / "typo"
    for args in (("verify",), ("prune",), ("prune", "--dry-run")):
        code, out, _ = cli(capsys, "--home", str(home), "plugin", "store", *args)
        assert code == 0 and "0" in out
    assert not home.exists()


def test_an_unreadable_record_is_reported_without_a_made_up_name(home, installed, capsys):
    meta_path = next((home / ".dshctl/store/npm/trees").glob("*.json"))
    meta_path.write_text("{not json")
    code, out, _ = cli(capsys, "plugin", "store", "verify")
    bad = [line for line in out.splitlines() if line.startswith("corrupt")]
    assert code == 1 and len(bad) == 1 and "(unreadable record)" in bad[0] and "None" not in bad[0]
    code, _out, err = cli(capsys, "plugin", "--profile", "work", "add", installed.url)
    assert code == 0, err  # the entry does not count: downloaded and recorded again
    code, out, _ = cli(capsys, "plugin", "store", "verify")
    assert code == 0 and "0 corrupt" in out, out
