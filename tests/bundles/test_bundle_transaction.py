"""Atomicity: a fault at every named step leaves the profile byte-identical; runs are serialized."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import sys
from pathlib import Path

import pytest

from dshctl.bundles.install import Installer, Options
from dshctl.bundles.transaction import FAULT_ENV, STEPS, InjectedFault
from dshctl.errors import DshctlError
from dshctl.bundles.tree import file_digests, tree_hash

from .conftest import snapshot


def run(home, op, arg, fault=None, profile="web"):
    installer = Installer(home, profile, Options(fault_at=fault))
    return getattr(installer, op)(arg)


def store_consistent(home: Path) -> None:
    """Every recorded package's tree exists and matches its metadata; no scratch is left behind.

    A tree without metadata (a fault between the two store writes) does not count as stored: the
    next fetch of that commit redoes it (test_every_single_write_can_fail_* proves it does).
    """
    store = home / ".dshctl" / "store"
    packages = store / "packages"
    for meta_path in packages.glob("*.json") if packages.exists() else []:
        meta = json.loads(meta_path.read_text())
        tree = packages / meta_path.stem
        assert tree_hash(file_digests(tree)) == meta["integrity"], f"damaged tree {tree}"
    refs = store / "refs.json"
    if refs.exists():
        for key, entry in json.loads(refs.read_text()).items():
            assert (packages / f"{entry['commit']}.json").is_file(), f"{key} remembers a missing tree"
    for tmp in (home / ".dshctl" / "tmp", store / "tmp"):
        assert not tmp.exists() or not any(tmp.iterdir()), f"scratch left behind in {tmp}"


@pytest.fixture
def populated(home, repos):
    """A profile with one bundle (a), a second source (b) and a newer commit of a."""
    a, b = repos("a"), repos("b")
    a.bundle("dsh-a", greeting="v1")
    b.bundle("dsh-b")
    run(home, "add", [a.url + "#main"])
    a.bundle("dsh-a", greeting="v2")
    return a, b


@pytest.mark.parametrize("step", STEPS)
def test_fault_when_creating_a_profile(home, repos, step):
    src = repos("new")
    src.bundle("dsh-new")
    with pytest.raises(InjectedFault):
        run(home, "add", [src.url], fault=step)
    assert snapshot(home / "profiles" / "web") is None
    store_consistent(home)
    run(home, "add", [src.url])  # and the same add works afterwards
    assert (home / "profiles/web/node_modules/dsh-new").is_dir()


@pytest.mark.parametrize("step", STEPS)
def test_fault_during_update(home, populated, step):
    profile = home / "profiles" / "web"
    before = snapshot(profile)
    with pytest.raises(InjectedFault):
        run(home, "update", [], fault=step)
    assert snapshot(profile) == before
    store_consistent(home)


def test_fault_from_the_environment_through_the_cli(home, populated):
    a, b = populated
    profile = home / "profiles" / "web"
    before = snapshot(profile)
    env = {**os.environ, FAULT_ENV: "lockfile", "DSH_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-m", "dshctl", "plugin", "add", b.url], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "injected fault at step 'lockfile'" in proc.stderr and "Traceback" not in proc.stderr
    assert snapshot(profile) == before


def test_concurrent_adds_on_one_profile_are_serialized(home, repos):
    sources = [repos(f"c{i}") for i in range(3)]
    for i, src in enumerate(sources):
        src.bundle(f"dsh-c{i}")
    env = {**os.environ, "DSH_HOME": str(home)}
    procs = [subprocess.Popen([sys.executable, "-m", "dshctl", "plugin", "--profile", "web", "add",
                               src.url], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for src in sources]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    assert [r[2] for r in results] == [0, 0, 0], results
    manifest = json.loads((home / "profiles/web/package.json").read_text())
    assert sorted(manifest["dependencies"]) == ["dsh-c0", "dsh-c1", "dsh-c2"]
    assert sorted(manifest["dsh"]["profile"]["bundles"][1:]) == ["dsh-c0", "dsh-c1", "dsh-c2"]
    lock = json.loads((home / "profiles/web/dshctl.lock.json").read_text())
    assert sorted(lock["packages"]) == ["dsh-c0", "dsh-c1", "dsh-c2"]


def _fault_every_write(pristine: Path, scratch: Path, operation) -> int:
    """Run ``operation(home, fault)`` on fresh copies of ``pristine`` with a fault before write 1, 2,
    … until it succeeds; after each fault the profile and store must be as they were. Returns how
    many writes the run makes."""
    profile = pristine / "profiles" / "web"
    before = snapshot(profile)
    for n in range(1, 100):
        home = scratch / f"run{n}"
        shutil.copytree(pristine, home, symlinks=True)
        try:
            operation(home, f"write:{n}")
        except InjectedFault:
            assert snapshot(home / "profiles" / "web") == before, f"profile changed by fault at write {n}"
            store_consistent(home)
            operation(home, None)  # and the same operation then works on what the fault left
            store_consistent(home)
            continue
        return n - 1
    raise AssertionError("the operation never finished")


def test_every_single_write_can_fail_when_adding_and_replacing(home, populated, tmp_path):
    a, b = populated
    writes = _fault_every_write(home, tmp_path / "w",
                                lambda h, f: run(h, "add", [b.url, a.url], fault=f))
    # 2 trees + 2 metadata in the store, old a aside, new a and b placed, manifest, lock,
    # 2 remembered resolutions
    assert writes >= 11


def test_every_single_write_can_fail_when_creating_a_profile(home, repos, tmp_path):
    src = repos("fresh")
    src.bundle("dsh-fresh")
    writes = _fault_every_write(home, tmp_path / "w", lambda h, f: run(h, "add", [src.url], fault=f))
    assert writes >= 6  # tree, metadata, profile dirs, placed tree, patch file, manifest, lock, refs


def test_every_single_write_can_fail_during_update_remove_and_install(home, populated, tmp_path):
    profile = home / "profiles" / "web"
    assert _fault_every_write(home, tmp_path / "u", lambda h, f: run(h, "update", [], fault=f)) >= 5
    assert _fault_every_write(home, tmp_path / "r", lambda h, f: run(h, "remove", ["dsh-a"],
                                                                     fault=f)) >= 3
    (profile / "node_modules/dsh-a/cordis.patch.yml").write_text("- id: tampered\n")
    assert _fault_every_write(home, tmp_path / "i",
                              lambda h, f: Installer(h, "web", Options(fault_at=f)).install()) >= 2


def _in_child(body) -> int:
    """Run ``body`` in a forked child (a real process to kill, without a new interpreter's
    start-up); its exit status, negative for the signal that ended it."""
    pid = os.fork()
    if pid == 0:
        try:
            body()
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def test_a_run_killed_before_any_write_is_rolled_back_by_the_next_run(home, populated, tmp_path):
    """SIGKILL (no exception, no in-process rollback) before write 1, 2, …: the journal on disk lets
    the next run on the profile (here a dry run) restore it byte for byte."""
    a, b = populated
    before = snapshot(home / "profiles" / "web")
    temp = Path(tempfile.gettempdir())
    temp_before = set(temp.iterdir())
    for n in range(1, 100):
        copy = tmp_path / f"k{n}"
        shutil.copytree(home, copy, symlinks=True)
        status = _in_child(lambda: run(copy, "add", [b.url, a.url], fault=f"kill:{n}"))
        if status == 0:
            break
        assert status == -signal.SIGKILL, status
        Installer(copy, "web", Options(dry_run=True)).remove(["dsh-a"])  # any locked run recovers
        assert snapshot(copy / "profiles" / "web") == before, f"not restored after kill at write {n}"
        run(copy, "add", [b.url, a.url])  # a fetch redoes what the killed one left
        store_consistent(copy)
    assert n > 10  # the run really was killed at every one of its writes
    # git's HOME is the store's git-home/, not a temporary directory a kill would leave behind
    assert not [p.name for p in set(temp.iterdir()) - temp_before if p.name.startswith("dshctl-")]


def test_two_profiles_adding_the_same_commit_at_once_fetch_it_once(home, repos):
    src = repos("same")
    commit = src.bundle("dsh-same")
    env = {**os.environ, "DSH_HOME": str(home)}
    procs = [subprocess.Popen([sys.executable, "-m", "dshctl", "plugin", "--profile", name, "add",
                               src.url], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for name in ("p1", "p2")]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    assert [r[2] for r in results] == [0, 0], results
    packages = home / ".dshctl/store/packages"
    assert sorted(p.name for p in packages.iterdir()) == sorted([commit, f"{commit}.json"])
    for name in ("p1", "p2"):
        assert (home / "profiles" / name / "node_modules/dsh-same/cordis.patch.yml").is_file()
    store_consistent(home)


# -- npm dependencies under the same transaction ------------------------------------------------


def test_every_single_write_can_fail_when_adding_a_bundle_with_npm_dependencies(home, repos,
                                                                                npm_env, tmp_path):
    from .conftest import installed_packages, npm_bundle

    a, _b = repos("a"), None
    a.bundle("dsh-a", greeting="v1")
    run(home, "add", [a.url + "#main"])
    src = npm_bundle(repos, "dsh-npm", {"@scope/esm": "^1.0.0", "lib-c": "^1.0.0"})
    writes = _fault_every_write(home, tmp_path / "w", lambda h, f: run(h, "add", [src.url], fault=f))
    assert writes >= 3 * 3 + 4  # three store writes per npm package, then the profile's
    done = tmp_path / "w" / f"run{writes + 1}"
    assert ("lib-a", "1.2.3") in installed_packages(done / "profiles/web/node_modules/dsh-npm")


def test_a_run_with_npm_dependencies_killed_at_any_write_is_rolled_back(home, repos, npm_env,
                                                                       tmp_path):
    from .conftest import npm_bundle

    a = repos("a")
    a.bundle("dsh-a", greeting="v1")
    run(home, "add", [a.url + "#main"])
    src = npm_bundle(repos, "dsh-npm", {"lib-b": "^1.0.0"})
    before = snapshot(home / "profiles" / "web")
    for n in range(1, 100):
        copy = tmp_path / f"k{n}"
        shutil.copytree(home, copy, symlinks=True)
        status = _in_child(lambda: run(copy, "add", [src.url], fault=f"kill:{n}"))
        if status == 0:
            break
        assert status == -signal.SIGKILL, status
        Installer(copy, "web", Options(dry_run=True)).remove(["dsh-a"])  # any locked run recovers
        assert snapshot(copy / "profiles" / "web") == before, f"not restored after kill at write {n}"
        run(copy, "add", [src.url])
        store_consistent(copy)
    assert n > 5


# -- found by an attack on plugin add (issue 16) --------------------------------------------------


def test_a_shared_directory_made_by_another_run_between_check_and_create_is_used(home):
    """Two profiles of a fresh home: the other run creates ``profiles/`` just before this one."""
    from dshctl.bundles.transaction import Faults, Transaction

    class OtherRunFirst(Faults):
        def before_write(self, what):
            super().before_write(what)
            (home / "profiles").mkdir(exist_ok=True)  # the other process wins the race here

    tx = Transaction(home, home / "profiles" / "p1", faults=OtherRunFirst())
    with tx.running():
        tx.make_dirs(home / "profiles" / "p1" / "node_modules")
    assert (home / "profiles/p1/node_modules").is_dir()


def test_a_rollback_never_removes_the_shared_profiles_directory(home):
    """One run rolls back while the other, having seen ``profiles/``, creates its profile in it."""
    from dshctl.bundles.transaction import Faults, Transaction

    first = Transaction(home, home / "profiles" / "p1")
    first.make_dirs(home / "profiles" / "p1")

    class FirstRollsBackNow(Faults):
        def before_write(self, what):
            super().before_write(what)
            first.rollback()

    second = Transaction(home, home / "profiles" / "p2", faults=FirstRollsBackNow())
    with second.running():
        second.make_dirs(home / "profiles" / "p2" / "node_modules")  # FileNotFoundError before
    assert (home / "profiles/p2/node_modules").is_dir() and not (home / "profiles/p1").exists()
    shutil.rmtree(first.stage)


def test_two_fresh_profiles_added_at_once_both_succeed(home, repos):
    srcs = [repos(f"r{i}") for i in range(2)]
    for i, src in enumerate(srcs):
        src.bundle(f"dsh-r{i}")
    env = {**os.environ, "DSH_HOME": str(home)}
    for _round in range(3):
        shutil.rmtree(home / "profiles", ignore_errors=True)
        procs = [subprocess.Popen([sys.executable, "-m", "dshctl", "plugin", "--profile",
                                   f"p{i}", "add", src.url], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE) for i, src in enumerate(srcs)]
        results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
        assert [r[2] for r in results] == [0, 0], results


def test_a_refused_package_never_reaches_the_store(home, repos):
    plain, old = repos("plain"), repos("old")  # a package.json that is not an object: refused
    c1 = plain.commit({"package.json": '["dsh-plain"]'})
    c2 = old.commit({"package.json": json.dumps({
        "name": "dsh-old", "version": "1.0.0", "engines": {"dsh": "<0.0.1"},
        "dsh": {"bundle": {"patch": "p.yml"}}}), "p.yml": "[]\n"})
    bad_name = repos("badname")
    c3 = bad_name.commit({"package.json": '{"name": "../evil", "version": "1.0.0"}'})
    for src in (plain, old, bad_name):
        with pytest.raises(DshctlError):
            run(home, "add", [src.url])
    packages = home / ".dshctl/store/packages"
    for commit in (c1, c2, c3):
        assert not (packages / commit).exists() and not (packages / f"{commit}.json").exists()
    store_consistent(home)
