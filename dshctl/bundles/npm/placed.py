"""A bundle's placed npm packages, file by file, against what the store recorded when each checked
tarball (or git tree) was unpacked: what `plugin verify` reports and `plugin install` repairs.

Every placed file is re-hashed: a cheap check (sizes, times, package.json versions) misses an edit
that keeps the size, and an edit is exactly what this has to find.
"""
from __future__ import annotations

from pathlib import Path

from dshctl.bundles.tree import file_digests

KINDS = ("modified", "missing", "added", "linked", "unverifiable")


def npm_changes(home: Path, bundle_dir: Path, packages: dict[str, dict]) -> dict[str, list[str]]:
    """``kind -> paths`` (relative to ``bundle_dir``) where the placed npm files differ from the
    store's record. ``linked``: a file that shares its inode with another (an older dshctl's hard
    link into the store: an edit would reach the store). ``unverifiable``: a package whose record
    is gone from the store (``plugin install`` fetches it again)."""
    from dshctl.bundles.npm.store import NpmStore
    from dshctl.bundles.store import Store

    npm_store, git_store = NpmStore(Path(home)), Store(Path(home))
    out: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for path, entry in sorted(packages.items()):
        expected = _expected(npm_store, git_store, entry)
        if expected is None:
            out["unverifiable"].append(path)
            continue
        nested = {p[len(path) + 1:] for p in packages if p.startswith(path + "/")}
        if nested:  # packages placed inside this one are checked on their own
            prefixes = tuple(n + "/" for n in nested)
            expected = {k: v for k, v in expected.items()
                        if k not in nested and not k.startswith(prefixes)}
        linked: list[str] = []
        target = bundle_dir / path
        actual = file_digests(target, nested, linked) if target.is_dir() else {}
        for rel in sorted(expected):
            if rel not in actual:
                out["missing"].append(f"{path}/{rel}")
            elif actual[rel] != expected[rel]:
                out["modified"].append(f"{path}/{rel}")
        out["added"] += [f"{path}/{rel}" for rel in sorted(actual) if rel not in expected]
        out["linked"] += [f"{path}/{rel}" for rel in linked]
    return {kind: paths for kind, paths in out.items() if paths}


def _expected(npm_store, git_store, entry: dict) -> dict[str, str] | None:
    if "git" in entry:
        stored = git_store.get(str(entry["git"].get("commit")))
        return stored.files if stored is not None else None
    return npm_store.recorded_files(entry["integrity"])
