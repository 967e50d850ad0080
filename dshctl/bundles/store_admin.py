"""`plugin store verify` and `plugin store prune`: the shared package store as a whole.

verify re-hashes every entry: an npm tarball against the integrity the registry declared, and
what it unpacks to file by file against the digests its record holds (what every placing of it
is compared with); a git tree against the digests recorded at fetch and their tree hash.
``repair`` writes an npm record again from its checked tarball, or drops an entry that cannot be
rebuilt (a damaged tarball, a git tree), so the next install fetches it again.

prune removes the entries no profile's lock refers to, and the unpacked trees that stores of
older dshctl versions kept beside their tarballs (nothing reads them now), under the store-use
lock held exclusively (no install runs meanwhile). Each entry's metadata goes first (an entry
counts only with it), all of it by rename into scratch space, removed at the end; a killed prune
leaves whole entries or scratch that the next store writer clears.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from dshctl.bundles import lock as lockmod
from dshctl.bundles.npm import integrity as sri
from dshctl.bundles.npm.store import NpmStore
from dshctl.bundles.store import Store
from dshctl.bundles.transaction import store_use_lock
from dshctl.bundles.tree import diff_digests, file_digests, tree_hash
from dshctl.core.compose.profile import list_profiles, profile_dir
from dshctl.core.fsutil import file_lock
from dshctl.errors import DshctlError, Loc
from dshctl.records import field, record


@record
class EntryCheck:
    kind: str  # npm | git
    key: str  # <algo>-<hex> (npm) or the commit (git)
    label: str  # name@version, or the git URL
    problems: list[str] = field(default_factory=list)
    repaired: str | None = None  # "unpacked again" | "removed"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "key": self.key, "package": self.label,
                "ok": not self.problems, "problems": self.problems, "repaired": self.repaired}


def verify(home: Path, *, repair: bool = False) -> list[EntryCheck]:
    home = Path(home)
    npm, git = NpmStore(home), Store(home)
    checks = [_check_npm(npm, meta_path) for meta_path in _metas(npm.root / "trees")]
    checks += [_check_git(meta_path) for meta_path in _metas(git.packages)]
    if repair and any(c.problems for c in checks):
        with store_use_lock(home, exclusive=True), \
                file_lock(npm.lock_path, timeout=600, what="the package store"):
            for check in checks:
                if check.problems:
                    _repair(npm, git, check)
    return checks


def repair_entries(home: Path, packages: dict[str, dict]) -> list[str]:
    """Check the store entries of one bundle's npm packages and repair the damaged ones (install
    calls this when a placed file differs, since the store itself may be what changed: an older
    dshctl placed hard links). Labels of the repaired entries."""
    npm, git = NpmStore(Path(home)), Store(Path(home))
    keys = {_key(str(e.get("integrity"))) for e in packages.values() if "git" not in e}
    damaged = [c for c in (_check_npm(npm, npm.root / "trees" / f"{k}.json") for k in sorted(
        k for k in keys if k and (npm.root / "trees" / f"{k}.json").exists())) if c.problems]
    if damaged:
        with file_lock(npm.lock_path, timeout=600, what="the package store"):
            for check in damaged:
                _repair(npm, git, check)
    return [f"{c.label} ({'; '.join(c.problems)}): {c.repaired}" for c in damaged]


def _metas(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def _read(meta_path: Path) -> dict:
    try:
        data = json.loads(meta_path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _check_npm(npm: NpmStore, meta_path: Path) -> EntryCheck:
    key, meta = meta_path.name[:-len(".json")], _read(meta_path)
    check = EntryCheck("npm", key, _record_label(meta))
    integrity = meta.get("integrity")
    if not isinstance(integrity, str) or _key(integrity) != key:
        check.problems.append("the metadata does not name this entry's integrity")
        return check
    tgz = npm.root / "tarballs" / f"{key}.tgz"
    try:
        sri.check_file(tgz, integrity)
    except FileNotFoundError:
        check.problems.append(f"tarball missing: {tgz.name}")
        return check
    except (OSError, sri.IntegrityError):
        check.problems.append(f"tarball does not match its integrity {integrity[:20]}…")
        return check
    unpacked = npm.files_from_tarball(integrity)
    if unpacked is None:
        check.problems.append("the tarball cannot be unpacked")
    elif isinstance(meta.get("files"), dict):  # an older record has none: nothing to disagree
        check.problems += [f"record {p}" for p in _differences(meta["files"], unpacked)]
    return check


def _record_label(meta: dict) -> str:
    """``name@version`` from a record; a record that cannot be read names no package."""
    name, version = meta.get("name"), meta.get("version")
    return f"{name}@{version}" if isinstance(name, str) and isinstance(version, str) \
        else "(unreadable record)"


def _check_git(meta_path: Path) -> EntryCheck:
    commit, meta = meta_path.name[:-len(".json")], _read(meta_path)
    check = EntryCheck("git", commit, f"{meta.get('url')} @ {commit[:12]}")
    files = meta.get("files")
    if not isinstance(files, dict) or tree_hash(files) != meta.get("integrity"):
        check.problems.append("the recorded file digests do not match the recorded integrity")
        return check
    tree = meta_path.with_suffix("")
    if not tree.is_dir():
        check.problems.append("tree missing")
    else:
        check.problems += _differences(files, file_digests(tree))
    return check


def _differences(expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    out = []
    for kind, paths in diff_digests(expected, actual).items():
        if paths:
            more = f" (+{len(paths) - 3} more)" if len(paths) > 3 else ""
            out.append(f"{kind}: {', '.join(paths[:3])}{more}")
    return out


def _key(integrity: str) -> str | None:
    try:
        return sri.store_key(integrity)
    except sri.IntegrityError:
        return None


def _repair(npm: NpmStore, git: Store, check: EntryCheck) -> None:
    """Write a damaged npm record again from its checked tarball; else drop the entry."""
    scratch = _scratch(npm.root / "tmp", "npm-repair-")
    if check.kind == "npm":
        meta_path = npm.root / "trees" / f"{check.key}.json"
        meta = _read(meta_path)
        integrity = meta.get("integrity")
        files = npm.files_from_tarball(integrity) if isinstance(integrity, str) and \
            _key(integrity) == check.key else None
        if files is not None:
            from dshctl.bundles.store import write_unsynced

            write_unsynced(meta_path, (json.dumps({**meta, "files": files}) + "\n").encode())
            check.repaired = "recorded again from its tarball"
        else:
            _drop([meta_path, npm.root / "tarballs" / f"{check.key}.tgz",
                   npm.root / "trees" / check.key], scratch)
            check.repaired = "removed"
    else:
        _drop([git.packages / f"{check.key}.json", git.packages / check.key], scratch)
        check.repaired = "removed"
    shutil.rmtree(scratch, ignore_errors=True)


@record
class PruneResult:
    removed: list[str]  # labels of the removed entries
    kept: int
    bytes_freed: int

    def to_dict(self) -> dict:
        return {"removed": self.removed, "kept": self.kept, "bytesFreed": self.bytes_freed}


def prune(home: Path, *, dry_run: bool = False, lock_timeout: float = 120) -> PruneResult:
    """Remove the store entries no profile's lock refers to (waiting up to ``lock_timeout``
    seconds for running installs)."""
    home = Path(home)
    npm, git = NpmStore(home), Store(home)
    if not npm.root.is_dir() and not git.root.is_dir():
        return PruneResult([], 0, 0)   # no store: nothing to prune, and no lock files made for it
    with store_use_lock(home, exclusive=True, timeout=lock_timeout), \
            file_lock(npm.lock_path, timeout=600, what="the package store"):
        npm_keys, commits = referenced(home)
        doomed: list[tuple[str, list[Path]]] = []
        kept = 0
        for meta_path in _metas(npm.root / "trees"):
            key, meta = meta_path.name[:-len(".json")], _read(meta_path)
            label = f"npm {_record_label(meta)}"
            if key in npm_keys:
                kept += 1
                if meta_path.with_suffix("").is_dir():  # what an older dshctl unpacked
                    doomed.append((f"{label} (the unpacked copy older dshctl versions kept)",
                                   [meta_path.with_suffix("")]))
                continue
            doomed.append((label, [meta_path, npm.root / "tarballs" / f"{key}.tgz",
                                   meta_path.with_suffix("")]))
        for meta_path in _metas(git.packages):
            if meta_path.name[:-len(".json")] in commits:
                kept += 1
                continue
            doomed.append((f"git {_read(meta_path).get('url')} @ {meta_path.stem[:12]}",
                           [meta_path, meta_path.with_suffix("")]))
        freed = sum(_size(p) for _label, paths in doomed for p in paths)
        if not dry_run and doomed:
            scratch = _scratch(npm.root / "tmp", "npm-prune-")
            for _label, paths in doomed:
                _drop(paths, scratch)
            shutil.rmtree(scratch, ignore_errors=True)
    return PruneResult([label for label, _paths in doomed], kept, freed)


def referenced(home: Path) -> tuple[set[str], set[str]]:
    """npm store keys and git commits that some profile's lock refers to. A lock that cannot be
    read stops the prune: what it needs is unknown."""
    npm_keys: set[str] = set()
    commits: set[str] = set()
    for name in list_profiles(home):
        path = profile_dir(home, name) / lockmod.LOCK_NAME
        try:
            entries = lockmod.read(path)
        except DshctlError as exc:
            raise DshctlError(f"cannot prune: the lock of profile {name} is unreadable "
                              f"({exc.message})", loc=exc.loc or Loc(str(path)),
                              hint="repair or delete that lock first; nothing was removed") from None
        for entry in entries.values():
            if entry.commit:
                commits.add(entry.commit)
            if entry.registry and _key(str(entry.registry.get("integrity"))):
                npm_keys.add(_key(str(entry.registry["integrity"])))
            for dep in (entry.npm or {}).values():
                if isinstance(dep, dict) and isinstance(dep.get("git"), dict):
                    commits.add(str(dep["git"].get("commit")))
                elif isinstance(dep, dict) and _key(str(dep.get("integrity"))):
                    npm_keys.add(_key(str(dep["integrity"])))
    return npm_keys, commits


def _scratch(tmp: Path, prefix: str) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=tmp))


def _move(path: Path, into: Path) -> None:
    if path.exists() or path.is_symlink():
        into.mkdir(parents=True, exist_ok=True)
        path.rename(into / f"{len(list(into.iterdir()))}-{path.name}")


def _drop(paths: list[Path], scratch: Path) -> None:
    """Renames (same file system) in order: the metadata first, so the entry stops counting."""
    for path in paths:
        _move(path, scratch)


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    return 0
