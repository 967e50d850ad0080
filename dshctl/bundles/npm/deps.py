"""One bundle's npm dependencies: resolve (or read the lock), fetch into the store, describe.

``resolve_bundle`` asks the registry (add, update); ``from_lock`` re-creates exactly what the lock
records (install, and add of an unchanged bundle), from the store alone when ``offline``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from dshctl.bundles.limits import Limits
from dshctl.bundles.npm import config as npmconfig
from dshctl.bundles.npm import integrity as sri
from dshctl.bundles.npm.layout import check_path, name_of
from dshctl.bundles.npm.registry import Registry
from dshctl.bundles.npm.resolve import Resolver
from dshctl.bundles.npm.scripts import describe
from dshctl.bundles.npm.store import NpmStore, StoredTarball, Wanted, public_url
from dshctl.bundles.transaction import Faults
from dshctl.errors import DshctlError
from dshctl.records import field, record

Progress = Callable[[str], None]


@record
class NpmDeps:
    """What one bundle's ``node_modules`` holds: lock entries by path, and where each one's files
    come from (a git dependency's stored tree, or a stored tarball)."""
    bundle: str
    packages: dict[str, dict]  # path -> {"name", "version", "resolved", "integrity", ...}
    trees: dict[str, Path | StoredTarball] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)


class NpmContext:
    """Shared by every bundle of one run: config, one HTTP client, the store."""

    def __init__(self, home: Path, profile_dir: Path, *, faults: Faults, limits: Limits,
                 offline: bool, progress: Progress | None, git_store=None, refresh: bool = False,
                 unpack_root: Callable[[], Path] | None = None):
        self.home = home
        self.profile_dir = profile_dir
        self.offline = offline
        self.git_store = git_store  # the bundles' git Store: git dependencies go through it
        self.refresh = refresh
        self.progress = progress
        # unpack_root: the run's staging area, where downloaded packages are unpacked to be placed
        self.store = NpmStore(home, faults, limits, unpack_root)
        self._registry: Registry | None = None

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            from dshctl.bundles.npm.cache import PackumentCache

            config = npmconfig.load(self.profile_dir, self.home)
            # --offline: the cache alone; update re-resolves ranges, so it always revalidates;
            # otherwise npm's prefer-offline/prefer-online settings, else freshness decides.
            policy = "offline" if self.offline else "prefer-online" if self.refresh \
                else config.cache_policy
            self._registry = Registry(config, cache=PackumentCache(self.store.root / "packuments"),
                                      policy=policy)
            self._registry.max_packument_bytes = self.store.limits.packument_bytes
            self._registry.max_tarball_bytes = self.store.limits.total_bytes
        return self._registry

    def close(self) -> None:
        self.store.close()
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
    ctx._say(f"resolving npm dependencies of {bundle}")
    resolver = Resolver(ctx.registry, bundle, git_source=_git_source(ctx) if ctx.git_store else None,
                        on_place=None if ctx.offline else lambda node: _download_early(ctx, bundle, node))
    result = resolver.resolve(manifest)
    ctx.registry.save_cache(ctx.store.faults.before_write)
    packages = {}
    for node in result.nodes:
        dist = node.manifest.get("dist") or {}
        where = f"{node.name}@{node.version} needed by {bundle} ({node.chain()})"
        git = node.manifest.get("_git")
        if git:
            packages[node.path] = {
                "name": node.name, "version": node.version,
                "resolved": f"git+{git['url']}#{git['commit']}", "integrity": git["integrity"],
                "git": {"url": git["url"], "commit": git["commit"]}, "optional": node.optional,
                "requiredBy": sorted({dep.path or bundle for dep, _ in node.edges_in})}
            continue
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
    _fetch(ctx, deps, tarball_urls={n.path: (n.manifest.get("dist") or {}).get("tarball", "")
                                    for n in result.nodes})
    return deps


def _download_early(ctx: NpmContext, bundle: str, node) -> None:
    dist = node.manifest.get("dist") or {}
    if "_git" in node.manifest or not isinstance(dist.get("tarball"), str):
        return
    try:
        integrity = sri.expected(dist)
    except sri.IntegrityError:
        return  # refused with its message after the resolution
    ctx.store.download_early(ctx.registry, Wanted(node.name, node.version, dist["tarball"],
                                                  integrity, bundle))


def _git_source(ctx: NpmContext):
    """A git dependency goes through the bundles' git path: resolve, fetch into the store
    (limits checked before it enters), read its package.json."""
    import json

    from dshctl.bundles.limits import check_tree
    from dshctl.bundles.npm.pick import NoMatch
    from dshctl.bundles.specs import parse_spec

    def fetch(name: str, spec: str) -> dict:
        text = spec.strip()
        gspec = parse_spec(text if ":" in text or text.startswith("git@") else f"github:{text}")
        commit = ctx.git_store.resolve(gspec, offline=ctx.offline, refresh=ctx.refresh, fetch_head=True)
        stored = ctx.git_store.ensure(gspec, commit, offline=ctx.offline, progress=ctx.progress,
                                      check=lambda tree: check_tree(tree, ctx.store.limits, text))
        commit = stored.commit
        try:
            data = json.loads((stored.path / "package.json").read_text("utf-8-sig"))
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict) or data.get("name") != name:
            raise NoMatch(f"the repository's package.json does not name the package {name!r}")
        version = data.get("version") if isinstance(data.get("version"), str) else "0.0.0"
        return {**data, "version": version, "_git": {
            "spec": text, "url": gspec.url, "commit": commit, "integrity": stored.integrity,
            "path": str(stored.path)}}
    return fetch


def from_lock(ctx: NpmContext, bundle: str, packages: dict[str, dict]) -> NpmDeps:
    deps = NpmDeps(bundle, {p: dict(e) for p, e in packages.items()})
    if packages:
        _fetch(ctx, deps, tarball_urls={p: e["resolved"] for p, e in packages.items()})
    return deps


def _fetch(ctx: NpmContext, deps: NpmDeps, tarball_urls: dict[str, str]) -> None:
    from dshctl.bundles.npm.scripts import install_scripts

    for path, e in deps.packages.items():
        if "git" in e:
            tree = deps.trees[path] = _git_tree(ctx, deps.bundle, e)
            scripts = install_scripts(tree)
            if scripts:
                where = ctx.profile_dir / "node_modules" / deps.bundle / path
                deps.scripts.append(describe(e["name"], e["version"], where, scripts))
    wanted = {path: Wanted(e["name"], e["version"], tarball_urls[path], e["integrity"], deps.bundle)
              for path, e in deps.packages.items() if "git" not in e}
    stored: dict[str, StoredTarball] = ctx.store.ensure_all(
        list(wanted.values()), registry=None if ctx.offline else ctx.registry,
        offline=ctx.offline, progress=ctx.progress)
    for path, want in wanted.items():
        entry = deps.trees[path] = stored[want.integrity]
        if entry.scripts:
            where = ctx.profile_dir / "node_modules" / deps.bundle / path
            deps.scripts.append(describe(want.name, want.version, where, entry.scripts))


def _git_tree(ctx: NpmContext, bundle: str, entry: dict) -> Path:
    from dshctl.bundles.specs import GitSpec

    url, commit = entry["git"]["url"], entry["git"]["commit"]
    stored = ctx.git_store.ensure(GitSpec(entry["resolved"], url, commit), commit,
                                  offline=ctx.offline, progress=ctx.progress)
    if stored.integrity != entry["integrity"]:
        raise DshctlError(f"{entry['name']}@{entry['version']} needed by {bundle}: the stored "
                          f"tree of {url} @ {commit[:12]} does not match the lock's integrity",
                          hint="the lock was edited or the store is damaged")
    return stored.path


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
        if "git" in entry:
            _check_git_entry(entry, path, bad)
            continue
        if not entry["resolved"].startswith(("http://", "https://")):
            raise bad(f"{path}: resolved is not an http(s) URL")
        try:
            sri.store_key(entry["integrity"])
        except sri.IntegrityError as exc:
            raise bad(f"{path}: {exc}") from None
    return packages


def _check_git_entry(entry: dict, path: str, bad) -> None:
    import re

    from dshctl.bundles.specs import is_commit, parse_spec

    git = entry["git"]
    if not isinstance(git, dict) or not is_commit(git.get("commit")):
        raise bad(f"{path}: git.commit is not 40 hex digits")
    try:
        same = parse_spec(str(git.get("url"))).url == git["url"]
    except DshctlError as exc:
        raise bad(f"{path}: {exc.message}") from None
    if not same:
        raise bad(f"{path}: git.url is not in dshctl's resolved form")
    if not re.fullmatch(r"sha256-[0-9a-f]{64}", entry["integrity"]):
        raise bad(f"{path}: the integrity of a git dependency is a tree hash (sha256-<hex>)")
