"""Bundles from the npm registry and from tarball URLs (issue 23): what is recorded, update,
install --offline, and refusals. The manifests are compared with real pnpm's in
tests/dsh/test_plugin_interop.py; the tarball-URL forms below are what pnpm 11.7.0 wrote for the
same command (docs/bundles.md, "Beside dsh")."""
from __future__ import annotations

import json

import pytest

from dshctl.bundles.install import Installer, Options
from dshctl.errors import DshctlError

from .conftest import PATCH

BUNDLE = {"dsh": {"bundle": {"patch": "cordis.patch.yml"}}}


@pytest.fixture
def reg(tmp_path, monkeypatch):
    from .npm_registry import Registry, Server

    server = Server(Registry())
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    for key in ("npm_config_registry", "pnpm_config_registry"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("pnpm_config_registry", server.registry.url)  # pnpm 11's own setting
    r = server.registry
    r.add("lib-a", "1.0.0")
    for version in ("1.0.0", "1.1.0"):
        r.add("dsh-reg", version, extra=BUNDLE, deps={"lib-a": "^1.0.0"},
              files={"cordis.patch.yml": PATCH.format(row=f"reg-{version}", greeting="hi")})
    try:
        yield r
    finally:
        server.close()


def run(home, verb, *args, **opts):
    inst = Installer(home, "web", Options(**opts))
    return getattr(inst, verb)(*args)


def profile_file(home, name):
    return (home / "profiles" / "web" / name).read_text()


def test_a_registry_bundle_is_recorded_as_pnpm_records_it_and_updates_and_reinstalls(home, reg):
    outcome = run(home, "add", ["dsh-reg@^1.0.0"])
    assert [(c.name, c.action, c.version) for c in outcome.changes] == [("dsh-reg", "added", "1.1.0")]
    manifest = json.loads(profile_file(home, "package.json"))
    assert manifest["dependencies"] == {"dsh-reg": "^1.1.0"}
    assert manifest["dsh"]["profile"]["bundles"][-1] == "dsh-reg"
    lock = profile_file(home, "pnpm-lock.yaml")
    assert "      dsh-reg:\n        specifier: ^1.1.0\n        version: 1.1.0\n" in lock
    assert "  dsh-reg@1.1.0:\n    dependencies:\n      lib-a: 1.0.0\n" in lock
    reg.add("dsh-reg", "1.2.0", extra=BUNDLE, files={"cordis.patch.yml": "[]\n"})
    changes = run(home, "update", []).changes
    assert [(c.action, c.version) for c in changes] == [("updated", "1.2.0")]
    assert json.loads(profile_file(home, "dshctl.lock.json"))["packages"]["dsh-reg"]["version"] == "1.2.0"
    assert "dsh-reg@1.2.0" in profile_file(home, "pnpm-lock.yaml")
    node_modules = home / "profiles/web/node_modules/dsh-reg"
    import shutil

    shutil.rmtree(node_modules)
    reg.requests.clear()
    changes = run(home, "install", offline=True).changes
    assert [c.action for c in changes] == ["installed"] and not reg.requests
    assert json.loads((node_modules / "package.json").read_text())["version"] == "1.2.0"


def test_a_tarball_url_is_recorded_as_typed_and_pinned_by_its_sha512(home, reg):
    url = f"{reg.url}-/tarballs/dsh-reg/dsh-reg-1.1.0.tgz"
    run(home, "add", [url])
    assert json.loads(profile_file(home, "package.json"))["dependencies"] == {"dsh-reg": url}
    integrity = reg.packuments["dsh-reg"]["versions"]["1.1.0"]["dist"]["integrity"]
    lock = profile_file(home, "pnpm-lock.yaml")
    assert (f"  dsh-reg@{url}:\n    resolution: {{integrity: {integrity}, tarball: {url}}}\n"
            "    version: 1.1.0\n") in lock
    assert f"      dsh-reg:\n        specifier: {url}\n        version: {url}\n" in lock
    # a tarball that changes behind the URL is refused by the pinned integrity
    path = "/-/tarballs/dsh-reg/dsh-reg-1.1.0.tgz"
    reg.tarballs[path] = reg.tarballs["/-/tarballs/dsh-reg/dsh-reg-1.0.0.tgz"]
    import shutil

    shutil.rmtree(home / ".dshctl/store/npm")
    with pytest.raises(DshctlError, match="integrity|sha512"):
        run(home, "install")


@pytest.mark.parametrize("raw", ["Dsh-Reg", "dsh-reg@npm:other@1", "@/x", "dsh-reg@^9"])
def test_bad_registry_specs_get_one_line(home, reg, raw):
    with pytest.raises(DshctlError) as err:
        run(home, "add", [raw])
    assert err.value.hint and "\n" not in err.value.message
    assert not (home / "profiles/web/package.json").exists()
