"""Resolve a bundle's npm dependencies into a node_modules tree, placing packages as npm does.

The bundle's directory is the root. Nodes are processed shallowest first (then by path); for each
one, every dependency that does not already resolve (walking up the ``node_modules`` chain, as
Node's ``require`` does) to a satisfying version gets one picked (pick.py) and placed as high as
possible: in the dependent's own ``node_modules`` or any ancestor's, stopping below the first one
that holds another version of the name, or where it would shadow a version that a package below
already relies on. This is npm's hoisting (arborist's PlaceDep/CanPlaceDep without peer sets and
without replacing an already placed version), so ``node`` finds for every package a version in its
range, and the set of packages equals what ``npm install --omit=peer`` lays out.

Peers are not installed: the ones dsh provides are skipped, other unmet ones become warnings.
A cycle resolves like npm (a package found higher up is reused); only a chain deeper than
``MAX_DEPTH`` (two versions requiring each other forever) is refused.
"""
from __future__ import annotations

import heapq
import re
from typing import Callable

from dshctl.bundles.npm.names import describe_invalid, is_valid_name
from dshctl.bundles.npm.pick import NoMatch, is_registry_spec, pick, platform_problem
from dshctl.bundles.npm.registry import FetchFailed, Registry
from dshctl.bundles.semver import InvalidRange, Range
from dshctl.errors import DshctlError
from dshctl.records import field, record

MAX_DEPTH = 48


def provided_by_dsh(name: str) -> bool:
    """Peers dsh's own bundles provide at run time: never installed into a bundle."""
    return name.startswith("@deepseek-ai/") or name == "cordis"


class ResolveError(DshctlError):
    pass


@record(eq=False)
class Node:
    name: str
    version: str
    manifest: dict
    parent: "Node | None"
    children: dict[str, "Node"] = field(default_factory=dict)
    edges_in: list[tuple["Node", str]] = field(default_factory=list)
    optional: bool = False

    @property
    def path(self) -> str:
        parts = []
        node = self
        while node.parent is not None:
            parts.append(f"node_modules/{node.name}")
            node = node.parent
        return "/".join(reversed(parts))

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1

    def resolve(self, name: str) -> "Node | None":
        node: Node | None = self
        while node is not None:
            if name in node.children:
                return node.children[name]
            node = node.parent
        return None

    def is_within(self, other: "Node") -> bool:
        node: Node | None = self
        while node is not None:
            if node is other:
                return True
            node = node.parent
        return False

    def chain(self) -> str:
        names, node = [], self
        while node is not None:
            names.append(node.name)
            node = node.parent
        return " > ".join(reversed(names))


def _edges(manifest: dict) -> list[tuple[str, str, bool]]:
    """(name, spec, optional) sorted by name; optionalDependencies win over dependencies."""
    deps = manifest.get("dependencies") if isinstance(manifest.get("dependencies"), dict) else {}
    opt = manifest.get("optionalDependencies")
    opt = opt if isinstance(opt, dict) else {}
    out = {n: (str(s), False) for n, s in deps.items() if isinstance(s, str)}
    out.update({n: (str(s), True) for n, s in opt.items() if isinstance(s, str)})
    return [(n, s, o) for n, (s, o) in sorted(out.items())]


def is_git_spec(spec: str) -> bool:
    """npm's git forms: git+…, git://, git@host:…, ssh://, github:o/r and the bare o/r shorthand."""
    spec = spec.strip()
    return spec.startswith(("git+", "git://", "git@", "ssh://", "github:")) or \
        re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(#\S*)?", spec) is not None


def _satisfies(node: Node, spec: str) -> bool:
    if is_git_spec(spec) or "_git" in node.manifest:
        return (node.manifest.get("_git") or {}).get("spec") == spec.strip()
    if spec.strip() in ("", "*", "latest") or node.manifest.get("_tag") == spec:
        return True
    try:
        return Range.parse(spec).test(node.version)
    except InvalidRange:
        return False


@record
class Resolution:
    root: Node
    nodes: list[Node]
    notes: list[str]
    warnings: list[str]


class Resolver:
    def __init__(self, registry: Registry, bundle: str, *, workers: int = 8,
                 git_source: Callable[[str, str], dict] | None = None,
                 on_place: Callable[["Node"], None] | None = None):
        self.registry = registry
        self.bundle = bundle
        self.on_place = on_place  # told of each placed package (deps.py starts its download)
        self.git_source = git_source  # (name, spec) -> manifest with "_git", via the git store
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self._workers = workers
        self._asked: set[str] = set()
        self._executor = None  # made on the first request: a fully cached run needs no thread

    @property
    def _pool(self):
        if self._executor is None:
            from concurrent.futures import ThreadPoolExecutor

            self._executor = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="packument")
        return self._executor

    def _prefetch(self, manifest: dict) -> None:
        for name, spec, _ in _edges(manifest):
            if name in self._asked or not is_registry_spec(spec) or is_git_spec(spec) or \
                    not is_valid_name(name):
                continue
            self._asked.add(name)  # one packument per name: no thread waits on another's request
            if self.registry.cached(name) is None:  # a cached one needs no thread
                self._pool.submit(_quietly, self.registry.packument, name)

    def resolve(self, root_manifest: dict) -> Resolution:
        try:
            return self._resolve(root_manifest)
        finally:
            if self._executor is not None:
                self._executor.shutdown(wait=True, cancel_futures=True)

    def _resolve(self, root_manifest: dict) -> Resolution:
        root = Node(self.bundle, str(root_manifest.get("version") or "0.0.0"), root_manifest, None)
        self._prefetch(root_manifest)
        queue = [(0, "", 0, root)]
        counter = 1
        nodes: list[Node] = []
        while queue:
            _, _, _, node = heapq.heappop(queue)
            if node.depth > MAX_DEPTH:
                raise ResolveError(f"{node.name}@{node.version} needed by {self.bundle} "
                                   f"({node.chain()}): the dependency chain is deeper than "
                                   f"{MAX_DEPTH} (a cycle between versions that never settles)",
                                   hint="pin one of these packages to a version the others accept")
            for placed in self._step(node):
                nodes.append(placed)
                heapq.heappush(queue, (placed.depth, placed.path.lower(), counter, placed))
                counter += 1
        self._check_peers(root, nodes)
        nodes = [n for n in nodes if _attached(n)]
        return Resolution(root, sorted(nodes, key=lambda n: n.path), self.notes, self.warnings)

    def _step(self, node: Node) -> list[Node]:
        """Pick versions for the node's unmet edges, then place them in name order."""
        picks = []
        for name, spec, optional in _edges(node.manifest):
            self._check_name(node, name, spec)
            current = node.resolve(name)
            if current is not None and current is not node and _satisfies(current, spec):
                current.edges_in.append((node, spec))
                continue
            manifest = self._pick(node, name, spec, optional)
            if manifest is not None:
                picks.append((name, spec, optional, manifest))
        placed = []
        for name, spec, optional, manifest in picks:
            current = node.resolve(name)
            if current is not None and _satisfies(current, spec):  # placed meanwhile
                current.edges_in.append((node, spec))
                continue
            target = self._target(node, name, manifest)
            child = Node(name, manifest["version"], manifest, target, optional=optional)
            child.edges_in.append((node, spec))
            target.children[name] = child
            self._prefetch(manifest)
            if self.on_place is not None:
                self.on_place(child)
            placed.append(child)
        return placed

    def _check_name(self, node: Node, name: str, spec: str) -> None:
        """A name npm would refuse never becomes a path (``../../.ssh``), optional or not."""
        problem = describe_invalid(name)
        if problem:
            raise ResolveError(f"{problem}: declared as a dependency ({spec!r}) by "
                               f"{node.name}@{node.version} for {self.bundle} ({node.chain()}); "
                               "nothing was installed",
                               hint="the bundle or one of its dependencies is broken or hostile; "
                                    "report it to its author and do not install it")

    def _pick(self, node: Node, name: str, spec: str, optional: bool) -> dict | None:
        where = f"{name}@{spec} needed by {self.bundle} ({node.chain()})"
        try:
            if is_git_spec(spec) and self.git_source is not None:
                return self.git_source(name, spec)
            if not is_registry_spec(spec):
                raise NoMatch(f"{spec!r} is not a registry range or git URL (file:, link:, "
                              "workspace: and npm: alias dependencies are not installed)")
            manifest = pick(self.registry.packument(name), spec)
            if not isinstance(manifest.get("version"), str):
                raise FetchFailed("the registry sent a malformed packument (a version without "
                                  "\"version\")")
            problem = platform_problem(manifest)
            if problem:
                if optional:
                    self.notes.append(f"skipped optional {name}@{manifest['version']} for "
                                      f"{self.bundle}: {problem}")
                    return None
                raise NoMatch(f"{name}@{manifest['version']} does not run here: {problem}")
            return manifest
        except (FetchFailed, NoMatch, DshctlError) as exc:
            if isinstance(exc, DshctlError):
                exc = exc.message
            if optional:
                self.notes.append(f"skipped optional {where}: {exc}")
                return None
            raise ResolveError(f"{where}: {exc}", hint=_hint(exc)) from None

    def _target(self, start: Node, name: str, manifest: dict) -> Node:
        """The highest node whose node_modules may hold ``name`` at this version."""
        best = start
        target: Node | None = start
        while target is not None:
            if name in target.children:
                break  # another version lives here: a conflict (npm does not replace it)
            if target is not start:
                shadowed = target.resolve(name)
                if shadowed is not None and any(
                        dep.is_within(target) and _satisfies(shadowed, spec) and not
                        _satisfies(Node(name, manifest["version"], manifest, None), spec)
                        for dep, spec in shadowed.edges_in):
                    break
            best = target
            target = target.parent
        return best

    def _check_peers(self, root: Node, nodes: list[Node]) -> None:
        for node in [root, *nodes]:
            peers = node.manifest.get("peerDependencies")
            if not isinstance(peers, dict):
                continue
            meta = node.manifest.get("peerDependenciesMeta") or {}
            for name, spec in sorted(peers.items()):
                if provided_by_dsh(name) or not isinstance(spec, str):
                    continue
                if isinstance(meta, dict) and (meta.get(name) or {}).get("optional"):
                    continue
                found = node.resolve(name) if node.parent is not None else root.children.get(name)
                if found is None or not _satisfies(found, spec):
                    have = f" (found {found.version})" if found is not None else ""
                    who = "" if node is root else f" for {node.name}@{node.version}"
                    self.warnings.append(f"dshctl: warning: {self.bundle}: unmet peer "
                                         f"{name}@{spec}{who}{have}; install it yourself if "
                                         "the bundle needs it")


def _attached(node: Node) -> bool:
    parent = node.parent
    while parent is not None and parent.parent is not None:
        parent = parent.parent
    return parent is not None


def _quietly(fn, *args):
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - the resolver asks again and reports it with context
        pass


def _hint(exc: Exception) -> str:
    text = str(exc)
    if text.startswith("offline:"):
        return "run once without --offline to fetch it"
    if "401" in text or "403" in text:
        return "set //<registry host>/:_authToken in .npmrc (profile, $DSH_HOME or ~)"
    if "404" in text:
        return "check the package name, or the registry (npm_config_registry, .npmrc registry=)"
    if "raises it)" in text:  # a size cap (registry.TooBig)
        return "raise the limit with the flag named above if you trust the registry"
    if "HTTP 429" in text:
        return "the registry is rate-limiting dshctl; wait a minute and try again"
    if "satisfies" in text:
        return "the bundle asks for a version the registry does not have; ask its author"
    if "HTTP 5" in text or "no answer" in text or "reach" in text:
        return "the registry is failing or unreachable; try again later"
    return "fix the dependency in the bundle's package.json, or report it to its author"
