"""One bundle's npm dependencies: resolve (or read the lock), fetch into the store, describe.

``resolve_bundle`` asks the registry (add, update); ``from_lock`` re-creates exactly what the lock
records (install, and add of an unchanged bundle), from the store alone when ``offline``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from dshctl.bundles.limits import Limits
from dshctl.bundles.npm import config as npmconfig
from dshctl.bundles.npm import integrity as sri
from dshctl.bundles.npm.layout import check_path, name_of
from dshctl.bundles.npm.registry import Registry
from dshctl.bundles.npm.resolve import Resolver
from dshctl.bundles.npm.scripts import describe
from dshctl.bundles.npm.store import NpmStore, StoredTree, Wanted, public_url
from dshctl.bundles.transaction import Faults
from dshctl.errors import DshctlError

Progress = Callable[[str], None]


@dataclass
class NpmDeps:
    """What one bundle's ``node_modules`` holds: lock entries by path, and their stored trees."""
    bundle: str
    packages: dict[str, dict]  # path -> {"name", "version", "resolved", "integrity", ...}
    trees: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)


class NpmContext:
    """Shared by every bundle of one run: config, one HTTP client, the store."""

    def __init__(self, home: Path, profile_dir: Path, *, faults: Faults, limits: Limits,
                 offline: bool, progress: Progress | None):
        self.home = home
        self.profile_dir = profile_dir
        self.offline = offline
        self.progress = progress
        self.store = NpmStore(home, faults, limits)
        self._registry: Registry | None = None

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            self._registry = Registry(npmconfig.load(self.profile_dir, self.home))
        return self._registry

    def close(self) -> None:
        if self._registry is not None:
            self._registry.close()

    def _say(self, message: str) -> None:
        if self.progress:
            self.progress(message)


def has_dependencies(manifest: dict) -> bool:
    return any(isinstance(manifest.get(k), dict) and manifest[k]
               for k in ("dependencies", "optionalDependencies"))


def resolve_bundle(ctx: NpmContext, bundle: str, manifest: dict) -> NpmDeps:
    if not has_dependencies(manifest):
        return NpmDeps(bundle, {})
    if ctx.offline:
        raise DshctlError(f"offline: the npm dependencies of {bundle} are not in the lock file",
                          hint="run once without --offline to resolve them")
    ctx._say(f"resolving npm dependencies of {bundle}")
    resolver = Resolver(ctx.registry, bundle)
    result = resolver.resolve(manifest)
    packages = {}
    for node in result.nodes:
        dist = node.manifest.get("dist") or {}
        where = f"{node.name}@{node.version} needed by {bundle} ({node.chain()})"
        try:
            integrity = sri.expected(dist)
        except sri.IntegrityError as exc:
            raise DshctlError(f"{where}: {exc}", hint="dshctl installs no unchecked tarball") from None
        packages[node.path] = {
            "name": node.name, "version": node.version, "resolved": public_url(dist["tarball"]),
            "integrity": integrity, "optional": node.optional,
            "requiredBy": sorted({dep.path or bundle for dep, _ in node.edges_in})}
    ctx._say(f"resolved {len(packages)} npm packages for {bundle}")
    deps = NpmDeps(bundle, packages, notes=result.notes, warnings=result.warnings)
    _fetch(ctx, deps, tarball_urls={p: (r.manifest.get("dist") or {})["tarball"]
                                    for p, r in ((n.path, n) for n in result.nodes)})
    return deps


def from_lock(ctx: NpmContext, bundle: str, packages: dict[str, dict]) -> NpmDeps:
    deps = NpmDeps(bundle, {p: dict(e) for p, e in packages.items()})
    if packages:
        _fetch(ctx, deps, tarball_urls={p: e["resolved"] for p, e in packages.items()})
    return deps


def _fetch(ctx: NpmContext, deps: NpmDeps, tarball_urls: dict[str, str]) -> None:
    wanted = {path: Wanted(e["name"], e["version"], tarball_urls[path], e["integrity"], deps.bundle)
              for path, e in deps.packages.items()}
    stored: dict[str, StoredTree] = ctx.store.ensure_all(
        list(wanted.values()), registry=None if ctx.offline else ctx.registry,
        offline=ctx.offline, progress=ctx.progress)
    for path, want in wanted.items():
        tree = stored[want.integrity]
        deps.trees[path] = tree.path
        if tree.scripts:
            where = ctx.profile_dir / "node_modules" / deps.bundle / path
            deps.scripts.append(describe(want.name, want.version, where, tree.scripts))


def check_locked(bundle: str, packages: object, lock_path: Path) -> dict[str, dict]:
    """A lock's npm section may come from anywhere: paths must stay inside the bundle,
    integrities be SRI, resolved URLs http(s)."""
    def bad(why: str) -> DshctlError:
        return DshctlError(f"the lock entry for the npm dependencies of {bundle} is not usable: "
                           f"{why}", hint="restore the lock file from version control, or delete "
                                          "it and add the bundles again")
    if not isinstance(packages, dict):
        raise bad("not an object")
    for path, entry in packages.items():
        if not check_path(path):
            raise bad(f"path {path!r} is not a node_modules path")
        if not isinstance(entry, dict) or entry.get("name") != name_of(path):
            raise bad(f"{path}: name does not match the path")
        if not all(isinstance(entry.get(k), str) for k in ("version", "resolved", "integrity")):
            raise bad(f"{path}: version, resolved and integrity must be strings")
        if not entry["resolved"].startswith(("http://", "https://")):
            raise bad(f"{path}: resolved is not an http(s) URL")
        try:
            sri.store_key(entry["integrity"])
        except sri.IntegrityError as exc:
            raise bad(f"{path}: {exc}") from None
    return packages
