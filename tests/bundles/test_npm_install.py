"""npm dependencies of bundles against a real registry on 127.0.0.1, checked against npm and node."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dshctl.bundles.install import Installer, Options
from dshctl.bundles.limits import Limits
from dshctl.errors import DshctlError

from .conftest import PATCH, installed_packages, npm_bundle, snapshot
from .npm_registry import Behaviour
from .npm_universe import corpus_manifests

NODE_CHECK = r"""
const deps = JSON.parse(process.argv[1]); const dir = process.argv[2];
const { createRequire } = require('module');
const { pathToFileURL } = require('url');
const req = createRequire(dir + '/package.json');
(async () => {
  for (const dep of deps) {
    const resolved = require.resolve(dep, { paths: [dir] });
    req(dep);
    const url = pathToFileURL(resolved).href;
    await import(dep.startsWith('.') ? url : url);
    process.stdout.write(dep + ' ' + resolved + '\n');
  }
})().catch(e => { console.error(String(e)); process.exit(1); });
"""


def add(home, spec, profile="web", **opts):
    return Installer(home, profile, Options(**opts)).add([spec])


def node_loads(bundle_dir: Path, deps: list[str]) -> None:
    """``require.resolve`` from the bundle's directory, ``require`` and ``import()`` of each."""
    proc = subprocess.run(["node", "-e", NODE_CHECK, json.dumps(deps), str(bundle_dir)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == len(deps)


def npm_resolves(manifest: dict, workdir: Path, registry: str) -> set[tuple[str, str]]:
    workdir.mkdir(parents=True)
    # As a dependency (how a bundle is installed) it brings no devDependencies.
    as_dependency = {k: v for k, v in manifest.items() if k != "devDependencies"}
    (workdir / "package.json").write_text(json.dumps(as_dependency))
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("npm_config_")}
    env.update(npm_config_registry=registry, npm_config_cache=str(workdir.parent / "npm-cache"),
               npm_config_update_notifier="false", npm_config_audit="false",
               npm_config_fund="false")
    proc = subprocess.run(["npm", "install", "--ignore-scripts", "--omit=peer", "--no-audit",
                           "--no-fund", "--loglevel=error"], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return installed_packages(workdir)


@pytest.mark.parametrize("label,manifest", corpus_manifests(), ids=[n for n, _ in corpus_manifests()])
def test_corpus_bundle_resolves_as_npm_does_and_node_loads_it(home, repos, npm_env, tmp_path,
                                                              label, manifest):
    src = repos("bundle")
    src.commit({"package.json": json.dumps(manifest, indent=2),
                "cordis.patch.yml": PATCH.format(row="r", greeting="hi")})
    outcome = add(home, src.url, force=True)
    bundle_dir = home / "profiles/web/node_modules" / manifest["name"]
    ours = installed_packages(bundle_dir)
    theirs = npm_resolves(manifest, tmp_path / "npm", npm_env.url)
    assert ours == theirs
    assert ours, "the corpus bundle has dependencies"
    node_loads(bundle_dir, sorted(manifest["dependencies"]))
    lock = json.loads((home / "profiles/web/dshctl.lock.json").read_text())
    locked = lock["packages"][manifest["name"]]["npm"]
    assert {(e["name"], e["version"]) for e in locked.values()} == ours
    assert outcome.changes[0].npm_packages == len(locked)


def test_features_peers_scripts_optional_exports_cycle(home, repos, npm_env):
    deps = {"uses-peers": "^1.0.0", "with-script": "1.0.0", "@scope/esm": "^1.0.0",
            "needs-optional": "^1.0.0", "lib-x": "^1.0.0"}
    src = npm_bundle(repos, "dsh-feat", deps)
    outcome = add(home, src.url)
    bundle_dir = home / "profiles/web/node_modules/dsh-feat"
    assert ("lib-y", "1.0.0") in installed_packages(bundle_dir)  # the cycle's other half
    node_loads(bundle_dir, sorted(deps))
    peer_warnings = [w for w in outcome.warnings if "peer" in w]
    assert len(peer_warnings) == 1 and "dsh-feat" in peer_warnings[0] \
        and "left-pad-peer@^3.0.0" in peer_warnings[0]
    assert not (bundle_dir / "node_modules/with-script/built").exists()  # no script ran
    assert len(outcome.scripts) == 1 and "with-script@1.0.0" in outcome.scripts[0] \
        and "postinstall: node build.js" in outcome.scripts[0] and "npm run postinstall" in outcome.scripts[0]
    assert any("only-darwin" in n for n in outcome.notes)
    assert any("gone-optional" in n for n in outcome.notes)
    assert not (bundle_dir / "node_modules/only-darwin").exists()


def test_offline_install_rebuilds_from_the_store_and_profiles_share_it(home, repos, npm_env):
    src = npm_bundle(repos, "dsh-off", {"@scope/esm": "^1.0.0", "lib-b": "^2.0.0"})
    add(home, src.url)
    bundle_dir = home / "profiles/web/node_modules/dsh-off"
    expected = installed_packages(bundle_dir)
    lock_text = (home / "profiles/web/dshctl.lock.json").read_text()
    shutil.rmtree(bundle_dir / "node_modules")
    npm_env.requests.clear()
    outcome = Installer(home, "web", Options(offline=True)).install()
    assert outcome.changes[0].action == "installed"
    assert installed_packages(bundle_dir) == expected
    assert (home / "profiles/web/dshctl.lock.json").read_text() == lock_text
    add(home, src.url, profile="other")  # another profile: packuments yes, tarballs from the store
    assert not [r for r in npm_env.requests if r.startswith("/-/tarballs/")]
    assert installed_packages(home / "profiles/other/node_modules/dsh-off") == expected


def test_a_reinstall_from_the_lock_downloads_its_tarballs_side_by_side(home, repos, npm_env):
    """No resolution runs, so nothing was downloaded early: the store starts the downloads
    itself, all at once, while it unpacks each package in turn in the calling thread."""
    src = npm_bundle(repos, "dsh-side", {"@scope/esm": "^1.0.0", "lib-b": "^2.0.0", "lib-x": "^1.0.0"})
    add(home, src.url)
    bundle_dir = home / "profiles/web/node_modules/dsh-side"
    expected = installed_packages(bundle_dir)
    shutil.rmtree(home / ".dshctl/store/npm")
    shutil.rmtree(bundle_dir / "node_modules")
    stall = 1.0
    for name, _ in expected:
        npm_env.behaviour[name] = Behaviour(stall=stall)
    npm_env.requests.clear()
    start = time.monotonic()
    outcome = Installer(home, "web").install()
    took = time.monotonic() - start
    assert outcome.changes[0].action == "installed"
    assert installed_packages(bundle_dir) == expected
    tarballs = [r for r in npm_env.requests if r.startswith("/-/tarballs/")]
    assert len(tarballs) == len(expected) >= 4 and len(npm_env.requests) == len(tarballs)
    assert took < stall * (len(expected) - 1), f"{len(expected)} stalled downloads took {took:.1f} s"


def test_offline_with_a_package_missing_from_the_store(home, repos, npm_env):
    src = npm_bundle(repos, "dsh-miss", {"lib-c": "^1.0.0"})
    add(home, src.url)
    profile = home / "profiles/web"
    shutil.rmtree(home / ".dshctl/store/npm")
    shutil.rmtree(profile / "node_modules/dsh-miss/node_modules")
    before = snapshot(profile)
    with pytest.raises(DshctlError) as err:
        Installer(home, "web", Options(offline=True)).install()
    assert "offline" in err.value.message and "needed by dsh-miss" in err.value.message
    assert snapshot(profile) == before


def test_update_re_resolves_ranges(home, repos, npm_env):
    npm_env.add("moving", "1.0.0")
    src = npm_bundle(repos, "dsh-move", {"moving": "^1.0.0"})
    add(home, src.url)
    bundle_dir = home / "profiles/web/node_modules/dsh-move"
    assert ("moving", "1.0.0") in installed_packages(bundle_dir)
    npm_env.add("moving", "1.1.0")
    add(home, src.url)  # add of the same commit keeps what the lock says
    assert ("moving", "1.0.0") in installed_packages(bundle_dir)
    outcome = Installer(home, "web", Options()).update([])
    assert outcome.changes[0].action == "updated"
    assert ("moving", "1.1.0") in installed_packages(bundle_dir)


def test_registry_config_from_npmrc_with_scopes_and_a_token_never_written(home, repos, npm_env,
                                                                          monkeypatch):
    npm_env.behaviour["private-pkg"] = Behaviour(token="s3cret-token")
    monkeypatch.delenv("npm_config_registry")
    host = npm_env.url.split("//")[1]
    (home / ".npmrc").write_text(f"registry={npm_env.url}\n@scope:registry={npm_env.url}private/\n"
                                 f"//{host}:_authToken=${{TEST_NPM_TOKEN}}\n")
    monkeypatch.setenv("TEST_NPM_TOKEN", "s3cret-token")
    src = npm_bundle(repos, "dsh-auth", {"private-pkg": "^1.0.0", "@scope/esm": "^1.0.0"})
    env = {**os.environ, "DSH_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-m", "dshctl", "plugin", "add", src.url], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "/private/@scope/esm" in npm_env.requests
    assert "s3cret" not in proc.stdout + proc.stderr
    for path in (home / "profiles/web").rglob("*"):
        if path.is_file() and "node_modules" not in path.parts:
            assert "s3cret" not in path.read_text(errors="replace"), path
    cached = list((home / ".dshctl/store/npm/packuments").glob("*.json"))
    assert len(cached) >= 2  # the private packument is cached too, without the token
    for path in (home / ".dshctl/store").rglob("*"):
        if path.is_file():
            assert b"s3cret" not in path.read_bytes(), path


BAD = {  # dependency -> (range, behaviour, words the one line must hold)
    "missing-404": ("^1.0.0", None, "HTTP 404"),
    "private-pkg": ("^1.0.0", {"token": "x"}, "HTTP 401"),
    "forbidden": ("^1.0.0", {"status": 403}, "HTTP 403"),
    "always-500": ("^1.0.0", {"status": 500}, "HTTP 500 2 times"),
    "stalled": ("^1.0.0", {"stall": 2.5}, "no answer within"),
    "broken": ("^1.0.0", {"malformed": True}, "not JSON"),
    "only-v1": ("^2.0.0", None, "no published version satisfies"),
    "deep-a": ("^1.0.0", None, "deeper than"),
    "bad-integrity": ("1.0.0", None, "integrity mismatch"),
    "traversal": ("1.0.0", None, "outside the package"),
    "link-escape": ("1.0.0", None, "link pointing outside"),
    "device": ("1.0.0", None, "device file"),
}


@pytest.mark.parametrize("dep", sorted(BAD))
def test_a_bad_registry_answer_is_one_line_and_nothing_is_placed(home, repos, npm_env,
                                                                 monkeypatch, dep):
    spec, behaviour, words = BAD[dep]
    if behaviour:
        npm_env.behaviour[dep] = Behaviour(**behaviour)
    monkeypatch.setenv("npm_config_fetch_timeout", "700")
    ok = npm_bundle(repos, "dsh-ok", {"lib-a": "^1.0.0"})
    add(home, ok.url)
    profile = home / "profiles/web"
    before = snapshot(profile)
    src = npm_bundle(repos, "dsh-bad", {"lib-b": "^1.0.0", dep: spec})
    with pytest.raises(DshctlError) as err:
        add(home, src.url)
    message = err.value.message
    assert "\n" not in message and words in message and "dsh-bad" in message
    if dep != "deep-a":
        assert f"{dep}@{spec}" in message or f"{dep}@1.0.0" in message
    assert snapshot(profile) == before
    store_names = {json.loads(p.read_text())["name"]
                   for p in (home / ".dshctl/store/npm/trees").glob("*.json")}
    assert dep not in store_names  # a refused package never reaches the store
    assert not any((home / ".dshctl/store/npm/tmp").iterdir())
    if dep == "always-500":  # retried (npm_config_fetch_retries=1)
        assert npm_env.requests.count("/always-500") == 2


def test_5xx_then_success_is_retried(home, repos, npm_env):
    npm_env.behaviour["flaky"] = Behaviour(status=503, times=1)
    src = npm_bundle(repos, "dsh-flaky", {"flaky": "^1.0.0"})
    add(home, src.url)
    assert ("flaky", "1.0.0") in installed_packages(home / "profiles/web/node_modules/dsh-flaky")


def test_size_limits_refuse_and_a_flag_raises_them(home, repos, npm_env):
    src = npm_bundle(repos, "dsh-huge", {"huge": "1.0.0"})
    with pytest.raises(DshctlError) as err:
        add(home, src.url, limits=Limits(file_bytes=1024 * 1024))
    assert "per-file limit" in err.value.message and "--max-file-mb" in err.value.hint
    assert not (home / "profiles/web").exists()
    env = {**os.environ, "DSH_HOME": str(home)}
    cli = [sys.executable, "-m", "dshctl", "plugin", "add", src.url]
    proc = subprocess.run(cli + ["--max-file-mb", "1"], env=env, capture_output=True, text=True)
    assert proc.returncode == 1 and "per-file limit" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run(cli + ["--max-file-mb", "8"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_a_large_git_bundle_is_refused_before_the_store(home, repos):
    src = repos("big")
    commit = src.commit({"package.json": '{"name": "dsh-big", "version": "1.0.0", "dsh": '
                                         '{"bundle": {"patch": "p.yml"}}}', "p.yml": "[]\n",
                         "blob.bin": "y" * (2 * 1024 * 1024)})
    with pytest.raises(DshctlError) as err:
        add(home, src.url, limits=Limits(total_bytes=1024 * 1024))
    assert "more than 1 MB" in err.value.message and "--max-package-mb" in err.value.hint
    assert not (home / ".dshctl/store/packages" / commit).exists()


def test_piped_progress_is_one_line_per_phase(home, repos, npm_env):
    src = npm_bundle(repos, "dsh-prog", {"lib-a": "^1.0.0"})
    env = {**os.environ, "DSH_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-m", "dshctl", "plugin", "add", src.url], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for phase in ("resolving bundles", "resolving npm dependencies of dsh-prog",
                  "downloaded", "placing"):
        assert phase in proc.stderr, proc.stderr


def test_ctrl_c_rolls_back_and_says_so(home, repos, npm_env, tmp_path):
    import signal
    import time

    ok = npm_bundle(repos, "dsh-ok", {"lib-a": "^1.0.0"})
    add(home, ok.url)
    before = snapshot(home / "profiles/web")
    npm_env.behaviour["stalled"] = Behaviour(stall=2)
    src = npm_bundle(repos, "dsh-int", {"stalled": "^1.0.0"})
    # A cache of its own: the run-wide cache may already hold "stalled" (another test can fetch it),
    # and then no request would stall and there would be nothing to interrupt.
    env = {**os.environ, "DSH_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "own-cache")}
    proc = subprocess.Popen([sys.executable, "-m", "dshctl", "plugin", "add", src.url], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while "/stalled" not in npm_env.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the add ended before its stalled request could be interrupted"
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "rolled back" in err and "Traceback" not in err
    assert snapshot(home / "profiles/web") == before


@pytest.mark.parametrize("field,value", [
    ("path", "node_modules/../../../outside"), ("path", "node_modules/a/../../b"),
    ("integrity", "md5-abc"), ("resolved", "file:///etc/passwd")])
def test_a_tampered_lock_is_refused_before_anything_is_placed(home, repos, npm_env, tmp_path,
                                                             field, value):
    src = npm_bundle(repos, "dsh-lock", {"lib-c": "^1.0.0"})
    add(home, src.url)
    lock_path = home / "profiles/web/dshctl.lock.json"
    lock = json.loads(lock_path.read_text())
    npm = lock["packages"]["dsh-lock"]["npm"]
    path, entry = next(iter(npm.items()))
    if field == "path":
        npm[value] = npm.pop(path)
        npm[value]["name"] = value.rsplit("/", 1)[-1]
    else:
        entry[field] = value
    lock_path.write_text(json.dumps(lock))
    outside = [p for p in tmp_path.iterdir() if p.name != "home"]
    before = {p: snapshot(p) for p in outside}
    # issue 28: an unusable npm section no longer makes the profile unusable; install drops it,
    # says so and resolves the bundle's dependencies again (here from the offline cache)
    outcome = Installer(home, "web", Options(offline=True)).install()
    assert any("is not usable" in w and "again" in w for w in outcome.warnings)
    assert {p: snapshot(p) for p in outside} == before
    assert not (home.parent / "outside").exists() and not (home / "outside").exists()
    repaired = json.loads(lock_path.read_text())["packages"]["dsh-lock"]["npm"]
    assert path in repaired and value not in repaired


def test_a_git_dependency_goes_through_the_git_path(home, repos, npm_env):
    from .conftest import git

    dep = repos("gitdep")
    commit = dep.commit({"package.json": json.dumps({
        "name": "gitdep", "version": "0.3.0", "main": "index.js",
        "dependencies": {"lib-a": "^1.0.0"}}),
        "index.js": "module.exports = { id: 'gitdep', a: require('lib-a').id };\n"})
    src = npm_bundle(repos, "dsh-gd", {"gitdep": f"git+{dep.url}", "lib-a": "^2.0.0"})
    add(home, src.url)
    bundle_dir = home / "profiles/web/node_modules/dsh-gd"
    got = installed_packages(bundle_dir)
    assert ("gitdep", "0.3.0") in got and ("lib-a", "2.1.0") in got and ("lib-a", "1.2.3") in got
    node_loads(bundle_dir, ["gitdep", "lib-a"])
    entry = json.loads((home / "profiles/web/dshctl.lock.json").read_text())[
        "packages"]["dsh-gd"]["npm"]["node_modules/gitdep"]
    assert entry["git"] == {"url": dep.url, "commit": commit}
    assert (home / ".dshctl/store/packages" / commit).is_dir()
    shutil.rmtree(bundle_dir / "node_modules")
    Installer(home, "web", Options(offline=True)).install()
    assert installed_packages(bundle_dir) == got
    assert git("rev-parse", "HEAD", cwd=dep.work) == commit
