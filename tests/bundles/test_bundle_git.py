"""Installing from real git remotes: file:// and a git daemon on 127.0.0.1."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from dshctl.bundles.install import Installer, Options
from dshctl.bundles.store import Store
from dshctl.errors import DshctlError

from .conftest import git, snapshot


def add(home, *specs, profile="web", **opts):
    return Installer(home, profile, Options(**opts)).add(list(specs))


def manifest(home, profile="web"):
    return json.loads((home / "profiles" / profile / "package.json").read_text())


def lockfile(home, profile="web"):
    return json.loads((home / "profiles" / profile / "dshctl.lock.json").read_text())


def test_add_from_file_url_installs_records_and_locks(home, repos):
    src = repos("hello")
    commit = src.bundle("dsh-hello")
    outcome = add(home, src.url)
    assert outcome.initialized and [c.action for c in outcome.changes] == ["added"]
    profile = home / "profiles" / "web"
    installed = profile / "node_modules" / "dsh-hello"
    assert (installed / "cordis.patch.yml").is_file() and not (installed / ".git").exists()
    data = manifest(home)
    assert data["dependencies"] == {"dsh-hello": f"git+{src.url}"}
    assert data["dsh"]["profile"]["bundles"] == ["@dshctl/host-base", "dsh-hello"]
    assert (profile / "package.json").read_text().endswith("}\n")
    entry = lockfile(home)["packages"]["dsh-hello"]
    assert entry["commit"] == commit and entry["integrity"].startswith("sha256-")
    assert entry["forced"] is False and entry["spec"] == src.url
    assert (profile / "cordis.patch.yml").read_text().rstrip().endswith("[]")


def test_tags_branches_and_commits_resolve(home, repos):
    src = repos("refs")
    first = src.bundle("dsh-refs", greeting="one")
    src.tag("v1", annotated=True)
    src.tag("light")
    second = src.bundle("dsh-refs", greeting="two")
    src.push_branch("dev")
    assert add(home, f"{src.url}#v1").changes[0].commit == first  # annotated tag, peeled
    assert add(home, f"{src.url}#light").changes[0].commit == first
    assert add(home, f"{src.url}#dev").changes[0].commit == second
    assert add(home, f"{src.url}#{first}").changes[0].commit == first
    assert add(home, src.url).changes[0].commit == second  # no ref: the remote's HEAD
    with pytest.raises(DshctlError, match="no branch, tag or commit named 'nope'"):
        add(home, f"{src.url}#nope")


def test_git_daemon_shallow_fetch_of_large_history(home, repos, git_daemon):
    src = repos("big")
    src.history(200)
    head = src.bundle("dsh-big")
    assert git("rev-list", "--count", "main", cwd=src.work) == "201"
    outcome = add(home, f"{git_daemon}/big.git#main")
    assert outcome.changes[0].commit == head
    stored = Store(home).get(head)
    assert stored.shallow is True  # depth 1: only the wanted commit was fetched
    assert len(list((stored.path / "history").iterdir())) == 200


def test_force_pushed_branch_moves_on_update_and_keeps_lock_until_then(home, repos, git_daemon):
    src = repos("moving")
    old = src.bundle("dsh-moving", greeting="old")
    add(home, f"{git_daemon}/moving.git#main")
    base = src.commit({"x.txt": "x"})
    src.reset_hard(base)
    rewritten = src.bundle("dsh-moving", greeting="rewritten")  # force-pushed over main
    assert lockfile(home)["packages"]["dsh-moving"]["commit"] == old
    # Re-adding the same spec is reproducible: the remembered, stored commit, no network.
    assert add(home, f"{git_daemon}/moving.git#main").changes[0].action == "unchanged"
    outcome = Installer(home, "web", Options()).update([])
    assert outcome.changes[0].action == "updated" and outcome.changes[0].commit == rewritten
    text = (home / "profiles/web/node_modules/dsh-moving/cordis.patch.yml").read_text()
    assert "rewritten" in text


def test_offline_re_add_after_the_source_is_gone(home, repos):
    src = repos("gone")
    commit = src.bundle("dsh-gone")
    add(home, f"{src.url}#main", profile="one")
    shutil.rmtree(src.bare)
    outcome = add(home, f"{src.url}#main", profile="two", offline=True)
    assert outcome.changes[0].commit == commit
    # the manifest keeps the spec as typed (pnpm's form); the pin is in both lock files
    assert manifest(home, "two")["dependencies"]["dsh-gone"] == f"git+{src.url}#main"
    assert f"#{commit}" in (home / "profiles/two/pnpm-lock.yaml").read_text()
    # Automatic: commit already stored, so no network even without --offline.
    assert add(home, f"{src.url}#main", profile="three").changes[0].commit == commit
    with pytest.raises(DshctlError, match="offline: no remembered commit"):
        add(home, f"{src.url}#other", profile="two", offline=True)


def test_stored_commits_need_no_git_process_at_all(home, repos, tmp_path, monkeypatch):
    src = repos("nogit")
    commit = src.bundle("dsh-nogit")
    add(home, f"{src.url}#main", profile="one")
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # any git invocation would now fail
    assert add(home, f"{src.url}#main", profile="two").changes[0].commit == commit
    assert add(home, f"{src.url}#{commit}", profile="three").changes[0].action == "added"
    (home / "profiles/two/node_modules/dsh-nogit/cordis.patch.yml").write_text("[]\n")
    assert Installer(home, "two", Options()).install().changes[0].action == "installed"
    assert Installer(home, "two", Options(offline=True)).update([]).changes[0].action == "unchanged"
    with pytest.raises(DshctlError, match="git not found"):  # proves PATH really hides git
        add(home, f"{src.url}#other", profile="two")


def test_store_fetches_each_commit_once(home, repos):
    src = repos("shared")
    commit = src.bundle("dsh-shared")
    add(home, f"{src.url}#main", profile="a")
    meta = home / ".dshctl/store/packages" / f"{commit}.json"
    before = meta.stat().st_mtime_ns
    add(home, src.url + "#" + commit, profile="b")
    assert meta.stat().st_mtime_ns == before
    assert sorted(p.name for p in (home / ".dshctl/store/packages").iterdir()) == \
        sorted([commit, f"{commit}.json"])


@pytest.mark.parametrize("files,message", [
    ({"README.md": "no manifest"}, "has no package.json"),
    ({"package.json": json.dumps({"name": "dsh-broken", "dsh": {"bundle": {"patch": "p.yml"}}}),
      "p.yml": "- id: [unclosed\n"}, "failed to parse overlay"),
    ({"package.json": json.dumps({"name": "dsh-map", "dsh": {"bundle": {"patch": "p.yml"}}}),
      "p.yml": "id: not-a-list\n"}, "must be a top-level YAML array"),
    ({"package.json": json.dumps({"name": "dsh-esc", "dsh": {"bundle": {"patch": "../x.yml"}}})},
     "points outside the package"),
    ({"package.json": json.dumps({"name": "dsh-abs", "dsh": {"bundle": {"patch": "/etc/hosts"}}})},
     "points outside the package"),
    ({"package.json": json.dumps({"name": "dsh-none", "dsh": {"bundle": {"patch": "nope.yml"}}})},
     "does not exist in the package"),
])
def test_bad_packages_are_refused_and_profile_untouched(home, repos, files, message):
    good = repos("good")
    good.bundle("dsh-good")
    add(home, good.url)
    src = repos("bad")
    src.commit(files)
    before = snapshot(home / "profiles")
    assert before
    with pytest.raises(DshctlError, match=message) as err:
        add(home, src.url)
    assert err.value.loc is not None and err.value.hint
    assert snapshot(home / "profiles") == before


@pytest.mark.parametrize("link_target,patch,message", [
    ("/etc/passwd", "cordis.patch.yml", "points outside it"),
    ("../../outside.yml", "cordis.patch.yml", "points outside it"),
    ("real.yml", "cordis.patch.yml", "goes through a symbolic link"),
])
def test_hostile_symlinks_are_refused(home, repos, link_target, patch, message):
    src = repos("evil")
    (src.work / "real.yml").write_text("[]\n")
    os.symlink(link_target, src.work / "cordis.patch.yml")
    src.commit({"package.json": json.dumps({"name": "dsh-evil", "dsh": {"bundle": {"patch": patch}}})})
    with pytest.raises(DshctlError, match=message):
        add(home, src.url)
    assert not (home / "profiles" / "web").exists()


@pytest.mark.parametrize("links,message", [
    ({"lib/deep/up": "../../.."}, "points outside it"),  # lexically out, deep in the tree
    ({"x": ".", "y": "x/x/../.."}, "resolves outside it"),  # each link looks inside; the chain escapes
    ({"a": "lib", "lib/b": "../a/../.."}, "points outside it|resolves outside it"),
])
def test_links_anywhere_in_the_tree_that_escape_are_refused(home, repos, links, message):
    src = repos("chain")
    (src.work / "lib" / "deep").mkdir(parents=True)
    (src.work / "lib" / "deep" / "f.js").write_text("x\n")
    for rel, target in links.items():
        os.symlink(target, src.work / rel)
    src.bundle("dsh-chain")
    with pytest.raises(DshctlError, match=message):
        add(home, src.url)
    assert not (home / "profiles" / "web").exists()
    store = home / ".dshctl" / "store" / "packages"
    assert not store.exists() or not any(store.iterdir())


def test_links_that_stay_inside_are_kept_as_links(home, repos):
    src = repos("inner")
    (src.work / "lib").mkdir()
    (src.work / "lib" / "a.js").write_text("a\n")
    os.symlink("lib/a.js", src.work / "main.js")
    src.bundle("dsh-inner")
    add(home, src.url)
    link = home / "profiles/web/node_modules/dsh-inner/main.js"
    assert link.is_symlink() and os.readlink(link) == "lib/a.js"


def test_plain_package_installs_as_a_plain_dependency_with_dsh_warning(home, repos):
    src = repos("plain")  # as dsh does: no flag needed (--allow-plain is accepted, changes nothing)
    src.commit({"package.json": json.dumps({"name": "left-pad", "version": "1.3.0"})})
    outcome = add(home, src.url)
    assert outcome.warnings == ["dsh: warning: left-pad declares no dsh.bundle — installed as a "
                                "plain dependency, not a profile layer (a later update that gains "
                                "one activates it automatically)"]
    data = manifest(home)
    assert "left-pad" in data["dependencies"]
    assert data["dsh"]["profile"]["bundles"] == ["@dshctl/host-base"]
    assert lockfile(home)["packages"]["left-pad"]["bundle"] is False


def test_incompatible_peer_range_refused_unless_forced(home, repos):
    src = repos("old")
    src.bundle("dsh-old", peerDependencies={"@deepseek-ai/dsh": "^0.1.0-rc.6"})
    with pytest.raises(DshctlError) as err:
        add(home, src.url)
    assert err.value.message.startswith(f"{src.url} (dsh-old ") and err.value.loc is None
    assert "'^0.1.0-rc.6'" in err.value.message and "0.1.1-rc.2" in err.value.message
    assert "--force" in err.value.hint
    outcome = add(home, src.url, force=True)
    assert outcome.changes[0].forced
    entry = lockfile(home)["packages"]["dsh-old"]
    assert entry["forced"] is True and entry["conflicts"][0]["range"] == "^0.1.0-rc.6"


def test_install_recreates_locked_state_and_remove_cleans_up(home, repos):
    src = repos("re")
    src.bundle("dsh-re")
    add(home, src.url)
    target = home / "profiles/web/node_modules/dsh-re"
    (target / "cordis.patch.yml").write_text("- id: tampered\n")
    shutil.rmtree(src.bare)  # install needs only the store
    outcome = Installer(home, "web", Options()).install()
    assert [c.action for c in outcome.changes] == ["installed"]
    assert "tampered" not in (target / "cordis.patch.yml").read_text()
    Installer(home, "web", Options()).remove(["dsh-re"])
    assert not target.exists()
    assert manifest(home)["dsh"]["profile"]["bundles"] == ["@dshctl/host-base"]
    assert lockfile(home)["packages"] == {}


def test_git_runs_with_clean_environment(home, repos, tmp_path, monkeypatch):
    """A user's global config (here: a URL rewrite and a hook path) must not reach dshctl's git."""
    evil_home = tmp_path / "userhome"
    evil_home.mkdir()
    marker = tmp_path / "hook-ran"
    hooks = evil_home / "hooks"
    hooks.mkdir()
    (hooks / "post-checkout").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (hooks / "post-checkout").chmod(0o755)
    (evil_home / ".gitconfig").write_text(
        f"[core]\n\thooksPath = {hooks}\n[url \"file:///nonexistent/\"]\n\tinsteadOf = file://\n")
    monkeypatch.setenv("HOME", str(evil_home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    # ... nor git variables of the calling environment
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'url.file:///nonexistent/.insteadof'='file://'")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "not-a-repo"))
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "ext:file")
    src = repos("clean")
    commit = src.bundle("dsh-clean")
    assert add(home, src.url).changes[0].commit == commit
    assert not marker.exists()


def test_disallowed_protocol_is_blocked_by_git_itself(home):
    from dshctl.bundles.git import Git, resolve_ref
    from dshctl.bundles.specs import GitSpec

    g = Git(home / "git-home")
    with pytest.raises(DshctlError, match="git failed"):
        resolve_ref(g, GitSpec("x", "ext::sh -c true", None))


@pytest.mark.parametrize("field,value,message", [
    ("commit", "../../../../victim", "not 40 hex digits"),
    ("url", "ext::sh -c id", "transport helpers"),
    ("url", "-oProxyCommand=x", "starts with '-'"),
    ("ref", "--upload-pack=x", "not a plain tag"),
])
def test_a_hostile_lock_file_is_refused_before_git_or_the_store_see_it(home, repos, field, value,
                                                                        message):
    src = repos("locked")
    src.bundle("dsh-locked")
    add(home, src.url)
    path = home / "profiles/web/dshctl.lock.json"
    data = json.loads(path.read_text())
    data["packages"]["dsh-locked"][field] = value
    path.write_text(json.dumps(data))
    before = snapshot(home)
    with pytest.raises(DshctlError, match=message) as err:
        Installer(home, "web", Options()).install()
    assert err.value.loc.file == str(path) and err.value.hint
    assert snapshot(home) == before


def test_a_lock_file_that_is_not_json_names_line_and_column(home, repos):
    src = repos("broken-lock")
    src.bundle("dsh-bl")
    add(home, src.url)
    path = home / "profiles/web/dshctl.lock.json"
    path.write_text('{\n  "lockfileVersion": 1,\n  "packages": {,}\n}\n')
    with pytest.raises(DshctlError, match="not valid JSON") as err:
        Installer(home, "web", Options()).install()
    assert (err.value.loc.line, err.value.loc.column) == (3, 16)


@pytest.fixture
def dumb_http(tmp_path):
    """git's "dumb" HTTP protocol: plain files from ``tmp_path/remotes`` on 127.0.0.1. It cannot
    fetch by object id or shallow, so it exercises the full-fetch fallback."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(tmp_path / "remotes"))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_http_server_without_fetch_by_id_gets_a_full_fetch(home, repos, dumb_http):
    src = repos("dumb")
    first = src.bundle("dsh-dumb", greeting="one")
    src.tag("v1")
    head = src.bundle("dsh-dumb", greeting="two")
    git("update-server-info", cwd=src.bare)  # what a dumb server needs
    outcome = add(home, f"{dumb_http}/dumb.git#v1")
    assert outcome.changes[0].commit == first
    assert Store(home).get(first).shallow is False  # the depth-1 fetch was refused: fallback used
    assert Installer(home, "web", Options()).update([]).changes[0].action == "unchanged"
    assert add(home, f"{dumb_http}/dumb.git", profile="head").changes[0].commit == head


def git_verbs(log) -> list[str]:
    return [next(a for a in line.split() if not a.startswith("-") and "=" not in a and
                 not a.startswith("/"))
            for line in log.read_text().splitlines()]


def logging_git(tmp_path, monkeypatch):
    shim = tmp_path / "shim"
    shim.mkdir()
    log = tmp_path / "git.log"
    real = shutil.which("git")
    (shim / "git").write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    return log


def test_a_cold_add_of_a_ref_runs_three_git_commands_and_of_head_two(home, repos, tmp_path, monkeypatch):
    """A ref: ls-remote, one fetch by id, one archive. The remote's HEAD: the fetch of HEAD names
    the commit, no ls-remote first. The scratch repository is made without `git init`, a fetch by
    id needs no `cat-file` check, and no auto-maintenance runs after it; an update of HEAD still
    lists the refs (nothing is fetched when HEAD has not moved)."""
    src = repos("counted")
    commit = src.bundle("dsh-counted")
    log = logging_git(tmp_path, monkeypatch)
    assert add(home, f"{src.url}#main", profile="ref").changes[0].commit == commit
    assert git_verbs(log) == ["ls-remote", "fetch", "archive"]
    log.write_text("")
    other = tmp_path / "other-home"
    assert add(other, src.url).changes[0].commit == commit
    assert git_verbs(log) == ["fetch", "archive"]
    assert "maintenance.auto=false" in log.read_text()
    log.write_text("")
    add(other, src.url, profile="two")  # warm: the resolution is remembered, the commit stored
    assert log.read_text() == ""
    assert Installer(other, "web", Options()).update([]).changes[0].action == "unchanged"
    assert git_verbs(log) == ["ls-remote"]
    log.write_text("")
    assert add(home, src.url, profile="head").changes[0].commit == commit  # stored under #main
    assert git_verbs(log) == ["fetch"]                                     # fetched, not stored twice


def test_install_rewrites_the_old_pinned_manifest_form_to_the_spec_as_typed(home, repos):
    """Profiles from before issue 23 recorded git+<url>#<commit>, which pnpm misreads for git://
    URLs; the next install writes the spec as typed and pnpm's lock with the same pin."""
    src = repos("legacy")
    commit = src.bundle("dsh-legacy")
    add(home, f"{src.url}#main")
    path = home / "profiles/web/package.json"
    data = json.loads(path.read_text())
    data["dependencies"]["dsh-legacy"] = f"git+{src.url}#{commit}"
    path.write_text(json.dumps(data, indent=2) + "\n")
    (home / "profiles/web/pnpm-lock.yaml").unlink()
    src.bundle("dsh-legacy", greeting="moved")  # main moves: install must keep the locked commit
    Installer(home, "web", Options()).install()
    assert manifest(home)["dependencies"]["dsh-legacy"] == f"git+{src.url}#main"
    assert f"version: git+{src.url}#{commit}" in (home / "profiles/web/pnpm-lock.yaml").read_text()
