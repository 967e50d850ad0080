"""Atomicity: a fault at every named step leaves the profile byte-identical; runs are serialized."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dshctl.bundles.install import Installer, Options
from dshctl.bundles.transaction import FAULT_ENV, STEPS, InjectedFault

from .conftest import snapshot

REMOVE_STEPS = ("resolve", "stage", "place", "manifest", "lockfile", "commit")


def run(home, op, arg, fault=None, profile="web"):
    installer = Installer(home, profile, Options(fault_at=fault))
    return getattr(installer, op)(arg)


def store_consistent(home: Path) -> None:
    packages = home / ".dshctl" / "store" / "packages"
    for tree in (p for p in packages.iterdir() if p.is_dir()) if packages.exists() else []:
        assert (packages / f"{tree.name}.json").is_file(), f"tree without metadata: {tree}"
    tmp = home / ".dshctl" / "tmp"
    assert not tmp.exists() or not any(tmp.iterdir()), "staging left behind"


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
def test_fault_when_adding_and_replacing(home, populated, step):
    a, b = populated
    profile = home / "profiles" / "web"
    before = snapshot(profile)
    with pytest.raises(InjectedFault):
        run(home, "add", [b.url, a.url + "#main"], fault=step)  # adds b, moves a to its new commit
    assert snapshot(profile) == before
    store_consistent(home)


@pytest.mark.parametrize("step", STEPS)
def test_fault_during_update(home, populated, step):
    profile = home / "profiles" / "web"
    before = snapshot(profile)
    with pytest.raises(InjectedFault):
        run(home, "update", [], fault=step)
    assert snapshot(profile) == before
    store_consistent(home)


@pytest.mark.parametrize("step", REMOVE_STEPS)
def test_fault_during_remove(home, populated, step):
    profile = home / "profiles" / "web"
    before = snapshot(profile)
    with pytest.raises(InjectedFault):
        run(home, "remove", ["dsh-a"], fault=step)
    assert snapshot(profile) == before


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


@pytest.mark.parametrize("step", STEPS)
def test_fault_during_install_of_the_locked_state(home, populated, step):
    profile = home / "profiles" / "web"
    (profile / "node_modules/dsh-a/cordis.patch.yml").write_text("- id: tampered\n")
    before = snapshot(profile)
    with pytest.raises(InjectedFault):
        Installer(home, "web", Options(fault_at=step)).install()
    assert snapshot(profile) == before
