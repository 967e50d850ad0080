"""Compatibility ranges and dsh's reconcile rules for dsh.profile.bundles."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dshctl.bundles import compat, manifest as mf


def test_compat_checks_peers_and_engines_against_the_one_declaration():
    ok = {"peerDependencies": {"@deepseek-ai/dsh": "^0.1.0-rc.6 || ^0.1.1-rc.1",
                               "@deepseek-ai/cordis": "^4.0.1", "react": "^18"},
          "engines": {"node": ">=22", "dsh": ">=0.1.1-rc.1 <0.2.0"}}
    assert compat.check(ok) == []
    bad = {"peerDependencies": {"@deepseek-ai/dsh": "0.1.0-rc.7", "@deepseek-ai/cordis": "^3.18.1"},
           "engines": {"dsh": "^0.2.0"}}
    fields = [c.field for c in compat.check(bad)]
    assert fields == ["peerDependencies.@deepseek-ai/dsh", "peerDependencies.@deepseek-ai/cordis",
                      "engines.dsh"]
    assert compat.check(bad)[0].version == compat.IMPLEMENTED_APIS["@deepseek-ai/dsh"]


def test_workspace_and_wildcard_specs():
    for spec in ("workspace:^", "workspace:*", "workspace:~", "*", ""):
        assert compat.check({"peerDependencies": {"@deepseek-ai/dsh": spec}}) == [], spec
    assert compat.check({"peerDependencies": {"@deepseek-ai/dsh": "workspace:^0.2.0"}})
    # dsh's own prerelease caveat: a caret on an older rc does not admit the next patch's rc.
    assert compat.check({"peerDependencies": {"@deepseek-ai/dsh": "^0.1.0-rc.6"}})


def test_unknown_deepseek_packages_are_not_judged():
    assert compat.check({"peerDependencies": {"@deepseek-ai/dsh-web-app": "^9"}}) == []


def _manifest(bundles, deps):
    return {"name": "p", "dependencies": {d: "x" for d in deps},
            "dsh": {"profile": {"bundles": list(bundles)}}}


def test_reconcile_appends_in_dependency_order_and_keeps_templates():
    m = _manifest(["@dshctl/host-base"], ["b", "plain", "a"])
    assert mf.reconcile(m, old_dependencies=[], is_bundle=lambda n: n != "plain")
    assert mf.bundles_of(m) == ["@dshctl/host-base", "b", "a"]
    assert not mf.reconcile(m, old_dependencies=["b", "plain", "a"], is_bundle=lambda n: n != "plain")


def test_reconcile_removes_only_former_bundle_dependencies():
    m = _manifest(["@dshctl/host-base", "kept-by-hand", "gone", "lost-bundle"], ["lost-bundle"])
    mf.reconcile(m, old_dependencies=["gone", "lost-bundle"], is_bundle=lambda n: n != "lost-bundle")
    # "kept-by-hand" never was a dependency: the user's; "gone" was and is not any more.
    assert mf.bundles_of(m) == ["@dshctl/host-base", "kept-by-hand"]


@given(st.lists(st.sampled_from("abcdefg"), unique=True),
       st.lists(st.sampled_from("abcdefg"), unique=True),
       st.lists(st.sampled_from("abcdefg"), unique=True),
       st.sets(st.sampled_from("abcdefg")))
def test_reconcile_invariants(bundles, old_deps, deps, bundle_pkgs):
    m = _manifest(["@dshctl/host-base", *bundles], deps)
    mf.reconcile(m, old_dependencies=old_deps, is_bundle=lambda n: n in bundle_pkgs)
    after = mf.bundles_of(m)
    assert after[0] == "@dshctl/host-base" and len(after) == len(set(after))
    for name in deps:  # every bundle dependency is a layer
        assert (name in after) == (name in bundle_pkgs)
    for name in bundles:  # names that never were dependencies are never dropped
        if name not in old_deps and name not in deps:
            assert name in after
    # the order of surviving names is kept
    survivors = [b for b in ["@dshctl/host-base", *bundles] if b in after]
    assert after[:len(survivors)] == survivors
    m2 = _manifest(after, deps)
    assert not mf.reconcile(m2, old_dependencies=deps, is_bundle=lambda n: n in bundle_pkgs)


def test_render_is_two_space_json_with_trailing_newline_and_key_order():
    m = {"name": "x", "private": True, "zeta": 1, "alpha": {"b": 1, "a": 2}}
    assert mf.render(m) == '{\n  "name": "x",\n  "private": true,\n  "zeta": 1,\n  "alpha": {\n' \
                           '    "b": 1,\n    "a": 2\n  }\n}\n'
