"""Property tests of the npm resolver: whatever the registry holds, the tree it builds lets Node's
resolution (walk up ``node_modules``) find, for every dependency of every placed package, a version
in its range; and every package is placed for a reason. Packuments come from a dict (the algorithm
under test is pure; the HTTP client is tested against a real server in test_npm_install.py)."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.bundles.npm.layout import check_path
from dshctl.bundles.npm.registry import FetchFailed
from dshctl.bundles.npm.resolve import ResolveError, Resolver
from dshctl.bundles.semver import satisfies

NAMES = ["a", "b", "c", "d", "@s/e", "f"]
VERSIONS = ["1.0.0", "1.1.0", "1.2.0", "2.0.0", "2.1.0", "3.0.0"]
RANGES = ["^1.0.0", "~1.1.0", "^2.0.0", "1.0.0", ">=1.1.0 <2.1.0", "*", "2.x", "^1.2.0", "3"]


class DictRegistry:
    def __init__(self, universe: dict):
        self.universe = universe

    def cached(self, name: str) -> None:
        return None  # nothing cached: every packument goes through the prefetch threads

    def packument(self, name: str) -> dict:
        if name not in self.universe:
            raise FetchFailed("not found in the registry (HTTP 404)")
        versions = {v: {"name": name, "version": v, "dependencies": deps,
                        "dist": {"tarball": f"http://r/{name}-{v}.tgz"}}
                    for v, deps in self.universe[name].items()}
        return {"name": name, "versions": versions, "dist-tags": {"latest": max(
            versions, key=lambda v: tuple(map(int, v.split("."))))}}


deps_st = st.dictionaries(st.sampled_from(NAMES), st.sampled_from(RANGES), max_size=3)
universe_st = st.dictionaries(
    st.sampled_from(NAMES),
    st.dictionaries(st.sampled_from(VERSIONS), deps_st, min_size=1, max_size=4),
    min_size=1, max_size=len(NAMES))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(universe=universe_st, root_deps=deps_st)
def test_every_edge_resolves_to_a_satisfying_version(universe, root_deps):
    try:
        result = Resolver(DictRegistry(universe), "bundle", workers=1).resolve(
            {"name": "bundle", "dependencies": root_deps})
    except ResolveError as err:
        assert "needed by bundle" in err.message
        assert any(words in err.message for words in
                   ("no published version satisfies", "HTTP 404", "deeper than"))
        return
    for node in [result.root, *result.nodes]:
        for name, spec in (node.manifest.get("dependencies") or {}).items():
            found = node.resolve(name)
            assert found is not None, (node.path, name)
            assert satisfies(found.version, spec) or spec == "*", (node.path, name, spec)
    paths = [n.path for n in result.nodes]
    assert len(paths) == len(set(paths))
    for node in result.nodes:
        assert check_path(node.path)
        assert node.edges_in, f"{node.path} is placed but nothing needs it"
        assert node.name in node.parent.children and node.parent.children[node.name] is node
