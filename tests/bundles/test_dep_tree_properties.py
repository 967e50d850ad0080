"""Properties of the npm dependency trees `plugin why` and `plugin list --depth` draw from a lock's
requiredBy records (bundles/dep_tree.py), on generated dependency graphs."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.bundles.dep_tree import bundle_tree, why_trees
from dshctl.bundles.lock import LockEntry

BUNDLE = "dsh-b"


@st.composite
def graphs(draw):
    """A lock's npm section: packages p0..pn-1 at paths, each reachable from the bundle (as every
    placed package is: one parent is the bundle or an earlier package) and required by any others
    too (cycles allowed, as npm's graphs have them)."""
    n = draw(st.integers(1, 9))
    names = [f"p{i}" for i in range(n)]
    paths = [f"node_modules/{name}" for name in names]
    npm = {}
    for i, path in enumerate(paths):
        first = draw(st.sampled_from([BUNDLE] + paths[:i]))
        extra = draw(st.lists(st.sampled_from(paths + [BUNDLE]), max_size=3, unique=True))
        npm[path] = {"name": names[i], "version": f"1.0.{i}",
                     "requiredBy": sorted({first, *extra} - {path})}
    return npm


def _entry(npm):
    return LockEntry(spec="x", url="file:///x", ref=None, commit="a" * 40, version="1.0.0",
                     integrity="sha256-" + "0" * 64, npm=npm)


def _walk(node, depth=0):
    yield node, depth
    for child in node.children:
        yield from _walk(child, depth + 1)


@settings(max_examples=200, deadline=None)
@given(graphs(), st.integers(0, 6))
def test_list_tree_edges_are_requiredBy_records_and_depth_is_kept(npm, depth):
    root = bundle_tree(BUNDLE, _entry(npm), depth)
    for node, level in _walk(root):
        assert level <= depth
        parent_key = BUNDLE if node is root else node.path
        for child in node.children:
            assert parent_key in npm[child.path]["requiredBy"]
    # depth >= 1: every direct dependency of the bundle is shown below it
    direct = {p for p, e in npm.items() if BUNDLE in e["requiredBy"]}
    if depth >= 1:
        assert {c.path for c in root.children} == direct


@settings(max_examples=200, deadline=None)
@given(graphs(), st.data())
def test_why_chains_run_from_the_bundle_down_to_the_package(npm, data):
    target = data.draw(st.sampled_from(sorted(npm)))
    trees = why_trees({BUNDLE: _entry(npm)}, npm[target]["name"])
    assert len(trees) == 1 and trees[0].name == BUNDLE
    leaves = [(n, d) for n, d in _walk(trees[0]) if not n.children and d > 0]
    assert leaves and all(n.path == target for n, _ in leaves)
    def check(node, parent_key, seen):
        assert parent_key in npm[node.path]["requiredBy"]
        assert node.path not in seen  # no chain loops
        for child in node.children:
            check(child, node.path, seen | {node.path})
    for child in trees[0].children:
        check(child, BUNDLE, frozenset())


def test_a_record_without_requiredBy_counts_as_direct():
    npm = {"node_modules/a": {"name": "a", "version": "1.0.0"}}
    root = bundle_tree(BUNDLE, _entry(npm), 1)
    assert [c.name for c in root.children] == ["a"]
    assert why_trees({BUNDLE: _entry(npm)}, "a")[0].children[0].name == "a"
