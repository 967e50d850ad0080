"""A bundle's npm dependencies as a tree, from the lock's ``requiredBy`` records: what
`plugin list --depth` shows below each bundle and the chains `plugin why` prints for a package that
only comes in through npm (both as pnpm shows them)."""
from __future__ import annotations

from dshctl.bundles import lock as lockmod
from dshctl.records import field, record


@record
class Node:
    name: str
    version: str | None
    path: str | None = None  # the placement path below the bundle (None for the bundle itself)
    optional: bool = False
    children: list["Node"] = field(default_factory=list)
    more: bool = False  # there are deeper dependencies, cut off by the depth

    def to_dict(self) -> dict:
        data: dict = {"name": self.name, "version": self.version}
        if self.path:
            data["path"] = self.path
        if self.optional:
            data["optional"] = True
        if self.children:
            data["dependencies"] = [c.to_dict() for c in self.children]
        return data


def _dependents(npm: dict[str, dict], bundle: str) -> dict[str, list[str]]:
    """``parent -> placement paths it requires``; the parent is a path, or the bundle's name for
    its direct dependencies (a record without ``requiredBy``, e.g. adopted from pnpm's lock,
    counts as direct)."""
    out: dict[str, list[str]] = {}
    for path, entry in sorted(npm.items()):
        parents = entry.get("requiredBy") if isinstance(entry.get("requiredBy"), list) else None
        for parent in parents or [bundle]:
            out.setdefault(parent if parent in npm else bundle, []).append(path)
    return out


def bundle_tree(name: str, entry: lockmod.LockEntry, depth: int) -> Node:
    """The bundle with its npm dependencies ``depth`` levels down (0: none, as pnpm's --depth)."""
    npm = entry.npm or {}
    below = _dependents(npm, name)
    root = Node(name, entry.version)

    def grow(node: Node, key: str, level: int, seen: frozenset[str]) -> None:
        kids = [p for p in below.get(key, []) if p not in seen]
        if level >= depth:
            node.more = bool(kids)
            return
        for path in sorted(kids, key=lambda p: npm[p].get("name", p)):
            dep = npm[path]
            child = Node(dep.get("name", path), dep.get("version"), path, bool(dep.get("optional")))
            node.children.append(child)
            grow(child, path, level + 1, seen | {path})
    grow(root, name, 0, frozenset())
    return root


def why_trees(locked: dict[str, lockmod.LockEntry], name: str) -> list[Node]:
    """For every bundle that brings in npm package ``name``: a tree from the bundle down to each
    placed copy of it, along every chain of ``requiredBy`` (paths shared between chains merged)."""
    out = []
    for bundle, entry in locked.items():
        npm = entry.npm or {}
        targets = [p for p, e in npm.items() if e.get("name") == name]
        if not targets:
            continue
        chains: list[list[str]] = []
        for target in sorted(targets):
            chains += _chains_to(npm, bundle, target)
        root = Node(bundle, entry.version)
        for chain in sorted(chains, key=lambda c: [npm[p].get("name", p) for p in c]):
            node = root
            for path in chain:
                found = next((c for c in node.children if c.path == path), None)
                if found is None:
                    dep = npm[path]
                    found = Node(dep.get("name", path), dep.get("version"), path,
                                 bool(dep.get("optional")))
                    node.children.append(found)
                node = found
        out.append(root)
    return out


def _chains_to(npm: dict[str, dict], bundle: str, target: str, limit: int = 10) -> list[list[str]]:
    """Paths from the bundle down to ``target`` (each a list of placement paths), shortest first,
    at most ``limit`` of them (pnpm, too, cuts the output at 10 end leaves)."""
    done: list[list[str]] = []
    frontier = [[target]]
    while frontier and len(done) < limit:
        nxt = []
        for chain in frontier:
            parents = npm[chain[0]].get("requiredBy")
            parents = parents if isinstance(parents, list) and parents else [bundle]
            for parent in parents:
                if parent not in npm:  # the bundle itself (or an unknown parent: stop there)
                    done.append(chain)
                elif parent not in chain:
                    nxt.append([parent] + chain)
        frontier = nxt
    seen, unique = set(), []
    for chain in done[:limit]:
        if tuple(chain) not in seen:
            seen.add(tuple(chain))
            unique.append(chain)
    return unique
