"""Read-only views of a profile's packages: list, why, verify. Nothing here writes."""
from __future__ import annotations

import json
from pathlib import Path

from dshctl.bundles import lock as lockmod
from dshctl.bundles import manifest as mf
from dshctl.bundles.store import Store
from dshctl.bundles.tree import diff_digests, file_digests, tree_hash
from dshctl.core.compose.profile import profile_dir
from dshctl.errors import DshctlError, Loc
from dshctl.records import as_dict, field, record


@record
class PackageRow:
    name: str
    spec: str | None  # as recorded in dependencies
    version: str | None
    commit: str | None
    position: int | None  # 1-based layer position; None for a plain dependency
    bundle: bool
    template: bool
    installed: bool
    forced: bool = False
    source: str | None = None  # the SPEC as typed
    problem: str | None = None  # the lock's npm section is unusable (install repairs it)

    def to_dict(self) -> dict:
        data = {"name": self.name, "spec": self.spec, "source": self.source,
                "version": self.version, "commit": self.commit, "position": self.position,
                "bundle": self.bundle, "template": self.template, "installed": self.installed,
                "forced": self.forced}
        if self.problem:
            data["problem"] = self.problem
        return data


def _load(home: Path, profile: str):
    directory = profile_dir(home, profile)
    manifest_path = directory / "package.json"
    if not manifest_path.exists():
        raise DshctlError(f'profile "{profile}" does not exist', loc=Loc(str(manifest_path)),
                          hint=f"create it by adding a bundle: dshctl plugin --profile {profile} "
                               "add <spec>")
    return directory, mf.read(manifest_path), lockmod.read(directory / lockmod.LOCK_NAME)


def list_packages(home: Path, profile: str) -> list[PackageRow]:
    """Bundles in layer order, then plain dependencies."""
    directory, manifest, locked = _load(home, profile)
    deps = mf.dependencies_of(manifest)
    bundles = mf.bundles_of(manifest)
    rows = []
    for name in bundles + [d for d in deps if d not in bundles]:
        entry = locked.get(name)
        # a listed bundle that is no dependency is the profile template's (dshctl's host-base,
        # dsh's in-box @deepseek-ai/* bundles): it comes with the installation, not node_modules
        template = name in bundles and name not in deps
        installed = template or (directory / "node_modules" / name).is_dir()
        rows.append(PackageRow(
            name, deps.get(name), entry.version if entry else _installed_version(directory, name),
            entry.commit if entry else None, bundles.index(name) + 1 if name in bundles else None,
            name in bundles, template, installed,
            entry.forced if entry else False, _source(name, entry),
            entry.npm_problem if entry else None))
    return rows


def dependency_trees(home: Path, profile: str, depth: int) -> dict[str, dict]:
    """``name -> tree`` of each locked package's npm dependencies, ``depth`` levels down (as
    pnpm's ``list --depth``: 0 shows none), from the lock's ``requiredBy`` records."""
    from dshctl.bundles.dep_tree import bundle_tree

    _directory, _manifest, locked = _load(home, profile)
    return {name: bundle_tree(name, entry, depth).to_dict() for name, entry in locked.items()}


def _source(name: str, entry) -> str | None:
    if entry is None:
        return None
    return entry.spec if entry.registry is None or entry.spec == entry.url else f"{name}@{entry.spec}"


def _installed_version(directory: Path, name: str) -> str | None:
    try:
        data = json.loads((directory / "node_modules" / name / "package.json").read_text("utf-8"))
        return data.get("version") if isinstance(data.get("version"), str) else None
    except (OSError, ValueError, AttributeError):
        return None


def why(home: Path, profile: str, name: str) -> dict:
    """Why ``name`` is part of the profile: its dependency spec, layer position and lock record."""
    from dshctl.bundles.dep_tree import why_trees

    directory, manifest, locked = _load(home, profile)
    deps = mf.dependencies_of(manifest)
    bundles = mf.bundles_of(manifest)
    npm_trees = why_trees(locked, name)
    if name not in deps and name not in bundles and name not in locked and not npm_trees:
        raise DshctlError(f"{name} is not part of profile {profile}",
                          loc=Loc(str(directory / "package.json")),
                          hint=f"see what is: dshctl plugin --profile {profile} list")
    entry = locked.get(name)
    reasons = []
    if name in deps:
        reasons.append(f"dependencies: {name} -> {deps[name]}")
    if name in bundles:
        kind = "template bundle" if name in mf.DEFAULT_TEMPLATE_BUNDLES and name not in deps \
            else "bundle"
        reasons.append(f"dsh.profile.bundles: {kind} at layer position {bundles.index(name) + 1}")
    elif name in deps:
        reasons.append("plain dependency: declares no dsh.bundle, so it is not a profile layer")
    if entry:
        target = entry.commit if entry.registry is None else \
            f"{entry.version} ({entry.registry['resolved']}, {entry.registry['integrity'][:15]}…)"
        reasons.append(f"locked: {entry.spec} resolved to {target}"
                       + (" (installed with --force despite incompatible ranges)" if entry.forced else ""))
    for tree in npm_trees:
        for chain in _chains(tree):
            reasons.append(f"npm dependency of {tree.name}: " + " > ".join(chain))
    return {"name": name, "profile": profile, "reasons": reasons,
            "directory": str(directory), "npm": [t.to_dict() for t in npm_trees],
            "dependency": deps.get(name), "position": bundles.index(name) + 1 if name in bundles
            else None, "lock": as_dict(entry) if entry else None}


def _chains(node, prefix: tuple[str, ...] = ()) -> list[list[str]]:
    here = prefix + (f"{node.name}@{node.version}" if node.version else node.name,)
    if not node.children:
        return [list(here)]
    return [c for child in node.children for c in _chains(child, here)]


@record
class VerifyResult:
    name: str
    status: str  # ok | modified | missing | damaged (the lock's npm section is unusable)
    files: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "status": self.status, "files": self.files}


def verify(home: Path, profile: str) -> list[VerifyResult]:
    """Compare every locked package's installed tree with the integrity the lock recorded."""
    directory, _manifest, locked = _load(home, profile)
    store = Store(Path(home))
    results = []
    for name, entry in locked.items():
        target = directory / "node_modules" / name
        if entry.npm_problem:
            results.append(VerifyResult(name, "damaged", {"lock": [entry.npm_problem]}))
            continue
        if not target.is_dir() or target.is_symlink():
            results.append(VerifyResult(name, "missing"))
            continue
        actual = file_digests(target, set(entry.npm))  # npm dependencies: not the bundle's
        files: dict[str, list[str]] = {}
        if tree_hash(actual) != entry.integrity:
            stored = store.get(entry.commit)
            files = {k: v for k, v in (diff_digests(stored.files, actual) if stored else
                                       {"modified": ["(the bundle's own files)"]}).items() if v}
        if entry.npm:  # every placed npm file re-hashed against the store's record
            from dshctl.bundles.npm.placed import npm_changes

            for kind, paths in npm_changes(Path(home), target, entry.npm).items():
                files.setdefault(kind, []).extend(paths)
        results.append(VerifyResult(name, "modified" if files else "ok", files))
    return results
