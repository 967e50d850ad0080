"""dshctl beside the real dsh on one profile: the same manifests and pnpm lock for every spec form,
and a mixed sequence of both tools that never loses a bundle (issue 23; docs/bundles.md)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bundles.conftest import PATCH, git_daemon, repos  # noqa: F401 - fixtures used below

PROFILE = "mix"
BUNDLE = {"dsh": {"bundle": {"patch": "cordis.patch.yml"}}}


@pytest.fixture
def small_registry():
    """A real npm registry on 127.0.0.1 holding only what a test adds (no universe to build)."""
    from bundles.npm_registry import Registry, Server

    server = Server(Registry())
    try:
        yield server.registry
    finally:
        server.close()


class Tools:
    """dsh and dshctl on one home, with the test registry in pnpm's and dshctl's settings."""

    def __init__(self, real_dsh, home: Path, registry_url: str, user_home: Path):
        self.real_dsh, self.home = real_dsh, home
        self.env = real_dsh.env(home, HOME=str(user_home), pnpm_config_registry=registry_url,
                                pnpm_config_update_notifier="false")

    def dsh(self, *args: str) -> subprocess.CompletedProcess:
        return self.real_dsh.run(self.home, "plugin", "--profile", PROFILE, *args, env=self.env,
                                 check=True)

    def dshctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "dshctl", "plugin", "--profile", PROFILE, *args],
                              env=self.env, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        if check and done.returncode != 0:
            raise AssertionError(f"dshctl plugin {' '.join(args)} exited {done.returncode}:\n"
                                 f"{done.stderr[-3000:]}")
        return done

    @property
    def profile(self) -> Path:
        return self.home / "profiles" / PROFILE

    def init_with_dsh(self) -> None:
        """The profile as dsh creates it (its template bundle and pnpm-workspace.yaml)."""
        self.dsh("list")

    def boot(self) -> str:
        done = self.real_dsh.run(self.home, "--profile", PROFILE, "--patch",
                                 str(self.real_dsh.no_typert_patch), "--dump-config", env=self.env,
                                 check=True)
        return done.stdout

    def dshctl_dump(self) -> str:
        done = subprocess.run([sys.executable, "-m", "dshctl", "profile", "dump", "--profile", PROFILE,
                               "--patch", str(self.real_dsh.no_typert_patch)], env=self.env,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def visible(self) -> tuple:
        """What a user can see: package.json, the installed (name, version) set, the composed profile."""
        return ((self.profile / "package.json").read_text(), installed(self.profile), self.boot())


def installed(profile: Path) -> set[tuple[str, str]]:
    """(name, version) of every package under the profile's node_modules, at any depth, outside
    pnpm's bookkeeping (``.pnpm``, ``.ignored_*``)."""
    out = set()
    for pj in (profile / "node_modules").rglob("package.json"):
        parts = pj.relative_to(profile).parts
        if any(p.startswith(".") for p in parts):
            continue
        parent = parts[:-1]
        if parent[-2] == "node_modules" or (parent[-2].startswith("@") and parent[-3] == "node_modules"):
            data = json.loads(pj.read_text())
            out.add((data["name"], data["version"]))
    return out


def bundle_files(name: str, row: str, **extra) -> dict[str, str]:
    return {"package.json": json.dumps({"name": name, "version": "1.0.0", **BUNDLE, **extra}, indent=2),
            "cordis.patch.yml": PATCH.format(row=row, greeting="hi")}


@pytest.fixture
def world(real_dsh, repos, git_daemon, small_registry, tmp_path):
    reg = small_registry
    reg.add("lib-a", "1.0.0")
    reg.add("lib-a", "2.0.0")
    reg.add("lib-b", "1.2.0", deps={"lib-a": "^1.0.0"})
    for version in ("1.0.0", "1.1.0", "2.0.0"):
        reg.add("dsh-reg", version, extra=BUNDLE, deps={"lib-a": "^1.0.0"},
                files={"cordis.patch.yml": PATCH.format(row=f"reg-{version[0]}", greeting="hi")})
    reg.add("@sc/dsh-scoped", "1.0.0", extra=BUNDLE,
            files={"cordis.patch.yml": PATCH.format(row="scoped", greeting="hi")})
    reg.packuments["@sc/dsh-scoped"]["dist-tags"]["beta"] = "1.0.0"
    srcs = {}
    for name in ("dsh-a", "dsh-b", "dsh-c", "dsh-sem"):
        srcs[name] = repos(name)
    srcs["dsh-a"].commit(bundle_files("dsh-a", "a1", dependencies={"lib-b": "^1.0.0", "lib-a": "^2.0.0"}))
    srcs["dsh-b"].commit(bundle_files("dsh-b", "b1"))
    srcs["dsh-b"].tag("v1.0.0")
    srcs["dsh-c"].commit(bundle_files("dsh-c", "c1"))
    for version in ("1.0.0", "1.4.0", "2.0.0"):
        srcs["dsh-sem"].commit(bundle_files("dsh-sem", f"sem-{version}"))
        srcs["dsh-sem"].tag(f"v{version}")
    plain = repos("plain")
    plain.commit({"package.json": json.dumps({"name": "plain-lib", "version": "1.0.0"})})
    user_home = tmp_path / "user"
    user_home.mkdir()

    def tools(name: str) -> Tools:
        return Tools(real_dsh, tmp_path / name, reg.url, user_home)
    return {"tools": tools, "srcs": srcs, "daemon": git_daemon, "registry": reg}


def test_every_spec_form_gets_the_manifest_lock_and_installed_set_dsh_gets(world):
    """One multi-spec add by each tool on a profile dsh created: package.json (spec text, key
    order, layer order) and pnpm-lock.yaml byte for byte, the same installed (name, version) set,
    dsh's warning for the plain package, and dsh boots dshctl's profile to the same composition."""
    d = world["daemon"]
    specs = [f"{d}/dsh-sem.git#semver:^1.0.0", "dsh-reg@^1", "@sc/dsh-scoped@beta", f"{d}/plain.git",
             f"{d}/dsh-a.git#main", "git+" + world["srcs"]["dsh-b"].url + "#v1.0.0"]
    by_dsh, by_dshctl = world["tools"]("by-dsh"), world["tools"]("by-dshctl")
    by_dsh.init_with_dsh()
    by_dshctl.init_with_dsh()
    dsh_run = by_dsh.dsh("add", *specs)
    ours = by_dshctl.dshctl("add", *specs)
    for name in ("package.json", "pnpm-lock.yaml", "pnpm-workspace.yaml"):
        assert (by_dshctl.profile / name).read_text() == (by_dsh.profile / name).read_text(), name
    manifest = json.loads((by_dshctl.profile / "package.json").read_text())
    assert list(manifest["dependencies"]) == sorted(manifest["dependencies"])
    assert manifest["dependencies"]["dsh-reg"] == "^1.1.0"
    assert manifest["dependencies"]["@sc/dsh-scoped"] == "^1.0.0"
    assert installed(by_dshctl.profile) == installed(by_dsh.profile)
    warning = "plain-lib declares no dsh.bundle — installed as a plain dependency"
    assert warning in dsh_run.stderr and warning in ours.stderr
    composed = by_dsh.boot()
    assert by_dshctl.boot() == composed.replace(str(by_dsh.home), str(by_dshctl.home))
    assert "sem-1.4.0-plugin" in composed and "reg-1-plugin" in composed
    # pnpm accepts dshctl's lock as its own: a dsh install changes nothing a user sees
    before = by_dshctl.visible()
    by_dshctl.dsh("install")
    assert by_dshctl.visible() == before
    # and on the profile dsh made (no dshctl.lock.json), dshctl reads pnpm's pins: list tells the
    # truth, install reproduces it (same commits and versions, nothing visible changes)
    listed = json.loads(by_dsh.dshctl("list", "--format", "json").stdout)
    assert all(row["installed"] for row in listed_rows(listed)) and len(listed_rows(listed)) == 7
    before = by_dsh.visible()
    lock_before = (by_dsh.profile / "pnpm-lock.yaml").read_text()
    by_dsh.dshctl("install")
    assert by_dsh.visible() == before
    assert (by_dsh.profile / "pnpm-lock.yaml").read_text() == lock_before
    assert by_dsh.dshctl("verify").returncode == 0


def test_a_mixed_sequence_of_both_tools_never_loses_a_bundle(world):
    d, srcs = world["daemon"], world["srcs"]
    t = world["tools"]("home")
    t.init_with_dsh()
    t.dshctl("add", f"{d}/dsh-a.git#main")
    t.dshctl("add", "git+" + srcs["dsh-b"].url + "#v1.0.0")
    t.dshctl("add", "dsh-reg")
    before = t.visible()
    assert {"a1-plugin", "b1-plugin", "reg-2-plugin"} <= rows(before[2])
    t.dsh("install")  # dsh's pnpm on dshctl's tree: nothing a user can see changes
    assert t.visible() == before
    t.dsh("add", f"{d}/dsh-c.git")
    listed = json.loads(t.dshctl("list", "--format", "json").stdout)
    assert all(row["installed"] for row in listed_rows(listed))
    srcs["dsh-a"].commit(bundle_files("dsh-a", "a2", dependencies={"lib-b": "^1.0.0"}))
    t.dshctl("update")
    assert {"a2-plugin", "c1-plugin"} <= rows(t.boot())
    srcs["dsh-c"].commit(bundle_files("dsh-c", "c2"))
    t.dsh("update")  # pnpm moves the unpinned git bundles; dshctl follows pnpm's newer pins
    assert "c2-plugin" in rows(t.boot())
    assert "c2-plugin" in rows(t.dshctl_dump())
    t.dshctl("install")
    assert "c2-plugin" in rows(t.boot())
    t.dsh("remove", "dsh-b")
    t.dshctl("install", "--offline")
    composed = t.boot()
    assert {"a2-plugin", "c2-plugin", "reg-2-plugin"} <= rows(composed)
    assert "b1-plugin" not in rows(composed) and "a1-plugin" not in rows(composed)
    bundles = json.loads((t.profile / "package.json").read_text())["dsh"]["profile"]["bundles"]
    assert bundles == ["@deepseek-ai/dsh-base", "dsh-a", "dsh-reg", "dsh-c"]
    assert t.dshctl_dump() == composed
    assert t.dshctl("verify").returncode == 0
    before = t.visible()
    t.dsh("install")
    assert t.visible() == before


def rows(dump: str) -> set[str]:
    return {line.split("name: ", 1)[1].strip() for line in dump.splitlines() if "  name: " in line}


def listed_rows(listed) -> list[dict]:
    return listed if isinstance(listed, list) else listed.get("packages", listed.get("rows", []))


def test_registry_settings_are_read_as_pnpm_reads_them(world):
    """A profile .npmrc names the registry and npm_config_registry points at a dead port: pnpm 11
    ignores npm_config_*, and dshctl ranks it below every .npmrc, so both install from .npmrc."""
    reg = world["registry"]
    by_dsh, by_dshctl = world["tools"]("npmrc-dsh"), world["tools"]("npmrc-dshctl")
    for t in (by_dsh, by_dshctl):
        del t.env["pnpm_config_registry"]
        t.env["npm_config_registry"] = "http://127.0.0.1:9/"
        t.init_with_dsh()
        (t.profile / ".npmrc").write_text(f"registry={reg.url}\n")
    by_dsh.dsh("add", "dsh-reg")
    by_dshctl.dshctl("add", "dsh-reg")
    for name in ("package.json", "pnpm-lock.yaml"):
        assert (by_dshctl.profile / name).read_text() == (by_dsh.profile / name).read_text(), name
    assert json.loads((by_dshctl.profile / "package.json").read_text())["dependencies"] == \
        {"dsh-reg": "^2.0.0"}
