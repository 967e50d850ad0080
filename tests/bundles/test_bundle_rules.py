"""Compatibility ranges and dsh's reconcile rules for dsh.profile.bundles."""
from __future__ import annotations

from hypothesis import given, settings
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


# -- a stored, already checked bundle is read without the dialect (bundles/package.py) ------------

import json  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

from dshctl.bundles.package import _quick_info, read_package  # noqa: E402
from dshctl.errors import DshctlError  # noqa: E402

_JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**20) | st.floats(allow_nan=False)
                     | st.text(max_size=8), lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
_RANGES = st.sampled_from(["^0.1.1-rc.1", "^4.0.1", "^0.2.0", "workspace:^", "*", "nonsense", ""])
_PACKAGE = st.fixed_dictionaries({}, optional={
    "name": st.sampled_from(["dsh-x", "@s/dsh-y", "Bad Name", "", "../x", "node_modules"]) | _JSON,
    "version": st.sampled_from(["1.0.0", "0.0.1-rc.1"]) | _JSON,
    "dsh": st.fixed_dictionaries({}, optional={"bundle": st.fixed_dictionaries({}, optional={
        "patch": st.sampled_from(["cordis.patch.yml", "missing.yml", "../out.yml", "", " ",
                                  "link.yml", "/abs.yml"]) | _JSON}) | _JSON}) | _JSON,
    "peerDependencies": st.dictionaries(st.sampled_from(["@deepseek-ai/dsh", "@deepseek-ai/cordis",
                                                         "react"]), _RANGES | _JSON, max_size=2),
    "engines": st.dictionaries(st.sampled_from(["dsh", "node"]), _RANGES, max_size=2),
    "description": st.text(max_size=12),
})


_PATCHES = st.sampled_from(["cordis.patch.yml", "missing.yml", "../out.yml", "", " ", "link.yml",
                            "/abs.yml", "sub/../cordis.patch.yml"])
_BUNDLE = st.fixed_dictionaries({  # mostly well-formed: the quick reading's own ground
    "name": st.sampled_from(["dsh-x", "@s/dsh-y", "Bad Name"]),
    "dsh": st.fixed_dictionaries({"bundle": st.fixed_dictionaries({"patch": _PATCHES})}),
}, optional={"version": st.sampled_from(["1.0.0", "2.0.0-rc.1"]) | _JSON,
             "peerDependencies": _PACKAGE.map(lambda d: d.get("peerDependencies", {})),
             "extra": _JSON})


def _full(root: Path):
    try:
        return read_package(root, source="src")
    except DshctlError:
        return "refused"


@settings(max_examples=300, deadline=None)
@given(_BUNDLE | _PACKAGE, st.booleans())
def test_the_quick_reading_of_a_checked_bundle_agrees_with_the_full_one(data, indented):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "cordis.patch.yml").write_text("- id: a\n  name: a\n")
        os.symlink("cordis.patch.yml", root / "link.yml")
        (root / "package.json").write_text(json.dumps(data, indent=2 if indented else None))
        quick = _quick_info(root, root / "package.json")
        full = _full(root)
        if quick is not None:
            assert quick == full  # taken quickly only when the full reading says the same
            assert read_package(root, source="src", patch_checked=True) == quick
        if full == "refused":
            assert quick is None  # and every refusal goes the full way, with its message


def test_the_quick_reading_declines_what_plain_json_reads_differently(tmp_path):
    (tmp_path / "cordis.patch.yml").write_text("- id: a\n  name: a\n")
    base = '"name": "dsh-q", "dsh": {"bundle": {"patch": "cordis.patch.yml"}}'
    for text in ("{" + base + "}", "\ufeff{" + base + "}", "{" + base + ', "n": 1}',
                 "{" + base + ', "name": "dsh-r"}', "{" + base + ', "x": "\\u0041"}',
                 "{" + base + ', "x": {"__jsExpr": "1"}}'):
        (tmp_path / "package.json").write_text(text, encoding="utf-8")
        quick = _quick_info(tmp_path, tmp_path / "package.json")
        assert (quick is not None) == (text == "{" + base + "}"), text


def test_a_bundle_declaration_that_is_a_list_is_refused_in_one_line(tmp_path):
    """Found by the property test above: ``"bundle": []`` was an internal error (exit 3)."""
    (tmp_path / "package.json").write_text('{"name": "dsh-l", "dsh": {"bundle": []}}')
    try:
        read_package(tmp_path, source="src")
    except DshctlError as err:
        assert "dsh.bundle.patch must be a path string" in err.message and err.loc.line == 1
    else:
        raise AssertionError("accepted")
