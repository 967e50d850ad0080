"""Plugin resolution for the Python host (docs/runtime.md, "Plugin resolution")."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from dshctl.core.yaml.dialect import load_yaml
from dshctl.loader import LoaderError, PluginUnavailable
from dshctl.loader.resolve import PluginResolver, module_name_for

from .helpers import Log, make_loader, run, states

MODULE = '''
name = "{name}"
def apply(ctx, config):
    ctx.provide("{service}", "{name}")
'''


def write_module(path, name, service="svc"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(MODULE.format(name=name, service=service))


def test_relative_names_resolve_beside_the_declaring_file(tmp_path):
    write_module(tmp_path / "patches" / "mine.py", "from-patch-dir")
    write_module(tmp_path / "profile" / "mine.py", "from-base")
    patch_row = load_yaml("- {id: a, name: ./mine.py}\n", str(tmp_path / "patches" / "p.yml")).value[0]

    async def main():
        loader = make_loader(Log())
        await loader.start([patch_row, {"id": "b", "name": "./mine", "isolate": {"svc": True}}],
                           base_dir=tmp_path / "profile")
        assert loader.resolve("a").fiber.plugin.name == "from-patch-dir"
        assert loader.resolve("b").fiber.plugin.name == "from-base"   # no position: the tree base
        path = (tmp_path / "patches" / "mine.py").resolve()
        assert sys.modules[module_name_for(path)] is loader.resolve("a").fiber.plugin
        await loader.stop()
    run(main())


def test_shipped_plugin_resolves_lazily():
    resolver = PluginResolver(shipped={"@dshctl/logger": "dshctl.host.plugins.logger"})
    plugin = resolver.resolve("@dshctl/logger", declared_in=Path("."))
    assert plugin.__name__ == "dshctl.host.plugins.logger" and callable(plugin.apply)


def test_entry_point_in_group_dshctl_plugins(tmp_path, monkeypatch):
    write_module(tmp_path / "site" / "acme_plugin.py", "acme")
    info = tmp_path / "site" / "acme_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dshctl.plugins]\n@acme/thing = acme_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    plugin = PluginResolver().resolve("@acme/thing", declared_in=tmp_path)
    assert plugin.name == "acme"


def test_bundle_declares_python_modules_in_package_json(tmp_path):
    home = tmp_path / "home"
    profile = tmp_path / "profile"
    one = profile / "node_modules" / "@scope" / "pkg"
    write_module(one / "py" / "main.py", "pkg-main")
    write_module(one / "py" / "startup.py", "pkg-startup")
    (one / "package.json").write_text(json.dumps({"name": "@scope/pkg", "dsh": {"python": {
        "@scope/pkg": "py/main.py", "@scope/pkg/startup": "py/startup.py"}}}))
    two = home / "profiles" / "node_modules" / "single"
    write_module(two / "plugin.py", "single")
    (two / "package.json").write_text(json.dumps({"name": "single", "dsh": {"python": "plugin.py"}}))
    resolver = PluginResolver(home=home)
    assert resolver.resolve("@scope/pkg", declared_in=profile).name == "pkg-main"
    assert resolver.resolve("@scope/pkg/startup", declared_in=profile).name == "pkg-startup"
    assert resolver.resolve("single", declared_in=profile).name == "single"   # $DSH_HOME/profiles
    deeper = profile / "node_modules" / "@scope" / "other-bundle"             # Node walks up
    assert resolver.resolve("@scope/pkg/startup", declared_in=deeper).name == "pkg-startup"
    with pytest.raises(PluginUnavailable):
        resolver.resolve("@scope/pkg/other", declared_in=profile)


def test_node_plugin_fails_its_row_or_is_skipped(tmp_path):
    (tmp_path / "plugin.mjs").write_text("export default {}\n")
    rows = [{"id": "llm", "name": "@deepseek-ai/dsh-llm"}, {"id": "js", "name": "./plugin.mjs"},
            {"id": "off", "name": "@deepseek-ai/dsh-tui", "disabled": True},   # never imported
            {"id": "ok", "name": "cordis:group", "group": True, "config": []}]

    async def main():
        loader = make_loader(Log())
        with pytest.raises(LoaderError) as info:
            await loader.start([dict(r) for r in rows], base_dir=tmp_path)
        message = info.value.message
        assert 'no Python implementation for plugin "@deepseek-ai/dsh-llm"' in message
        assert 'no Python implementation for plugin "./plugin.mjs"' in message
        assert "--skip-unavailable" in info.value.hint and "dsh-tui" not in message
        skipping = make_loader(Log(), skip_unavailable=True)
        report = await skipping.start([dict(r) for r in rows], base_dir=tmp_path)
        assert [r.full_id for r in report.by_action("skipped")] == ["llm", "js"]
        assert states(skipping) == {"llm": "SKIPPED", "js": "SKIPPED", "off": "DISABLED", "ok": "ACTIVE"}
        await skipping.stop()
    run(main())


def test_docs_plugin_resolution_example_runs():
    doc = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"
    [block] = re.findall(r"<!-- test: loader-resolve-example -->\n```python\n(.*?)```",
                         doc.read_text(encoding="utf-8"), re.S)
    exec(compile(block, "docs/runtime.md (loader-resolve-example)", "exec"), {"__name__": "doc"})


def test_bare_names_resolve_shipped_then_entry_point_then_bundle(tmp_path, monkeypatch):
    # one name offered three ways: the shipped plugin wins, then the entry point, then the bundle
    write_module(tmp_path / "site" / "ep_impl.py", "from-entry-point")
    info = tmp_path / "site" / "ep_impl-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-impl\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dshctl.plugins]\n@x/p = ep_impl\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    bundle = tmp_path / "profile" / "node_modules" / "@x" / "p"
    write_module(bundle / "impl.py", "from-bundle")
    (bundle / "package.json").write_text(json.dumps({"name": "@x/p", "dsh": {"python": "impl.py"}}))
    profile = tmp_path / "profile"
    shipped = {"@x/p": "dshctl.host.plugins.logger"}
    assert PluginResolver(shipped=shipped).resolve("@x/p", declared_in=profile).__name__ == \
        "dshctl.host.plugins.logger"
    assert PluginResolver(shipped={}).resolve("@x/p", declared_in=profile).name == "from-entry-point"
    resolver = PluginResolver(shipped={})
    resolver._entry_points = {}   # as if the distribution were not installed
    assert resolver.resolve("@x/p", declared_in=profile).name == "from-bundle"


def test_several_unavailable_rows_name_each_location_once(tmp_path):
    rows = load_yaml("- {id: a, name: '@deepseek-ai/dsh-llm'}\n- {id: b, name: '@deepseek-ai/dsh-tui'}\n",
                     str(tmp_path / "cordis.yml")).value

    async def main():
        with pytest.raises(LoaderError) as info:
            await make_loader(Log()).start(rows, base_dir=tmp_path)
        text = str(info.value)
        assert text == (f"{tmp_path}/cordis.yml:1:17: loader entries failed to apply: no Python "
                        f'implementation for plugin "@deepseek-ai/dsh-llm" (row a; probably a Node '
                        f"plugin); {tmp_path}/cordis.yml:2:17: no Python implementation for plugin "
                        f'"@deepseek-ai/dsh-tui" (row b; probably a Node plugin)')
    run(main())


def test_bare_names_walk_every_parent_node_modules_then_the_profiles(tmp_path):
    """Like Node: the declaring file's directory and each ancestor's ``node_modules`` (nearest wins),
    then the profile's own ``node_modules`` for rows declared outside the profile."""
    profile = tmp_path / "home" / "profiles" / "web"
    sibling = profile / "node_modules" / "@demo" / "sibling"
    write_module(sibling / "plugin.py", "profile-level")
    (sibling / "package.json").write_text(json.dumps({"name": "@demo/sibling", "dsh": {"python": "plugin.py"}}))
    declaring = profile / "node_modules" / "@demo" / "user"          # a bundle naming its sibling
    nested = declaring / "node_modules" / "@demo" / "sibling"        # its own copy is nearer
    resolver = PluginResolver(home=tmp_path / "home", profile_dir=profile, shipped={})
    resolver._entry_points = {}
    assert resolver.resolve("@demo/sibling", declared_in=declaring).name == "profile-level"
    write_module(nested / "plugin.py", "nested")
    (nested / "package.json").write_text(json.dumps({"name": "@demo/sibling", "dsh": {"python": "plugin.py"}}))
    assert resolver.resolve("@demo/sibling", declared_in=declaring).name == "nested"
    outside = tmp_path / "elsewhere" / "patches"                     # a --patch file's directory
    assert resolver.resolve("@demo/sibling", declared_in=outside).name == "profile-level"
    without_profile = PluginResolver(home=tmp_path / "home", shipped={})
    without_profile._entry_points = {}
    with pytest.raises(PluginUnavailable):
        without_profile.resolve("@demo/sibling", declared_in=outside)
