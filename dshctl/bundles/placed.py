"""A bundle as placed in ``node_modules`` against its lock entry, and what its stored tree declares:
the cheap checks the installer makes to leave an unchanged bundle alone (install.py)."""
from __future__ import annotations

import json
from pathlib import Path

from dshctl.bundles import lock as lockmod
from dshctl.bundles.tree import file_digests, tree_hash


def tree_as_locked(directory: Path, entry: lockmod.LockEntry) -> bool:
    """The bundle's own files as locked (its placed npm dependencies left out)."""
    return tree_hash(file_digests(directory, set(entry.npm))) == entry.integrity


def npm_as_locked(directory: Path, entry: lockmod.LockEntry) -> bool:
    """Every locked npm package is in place at its version (a cheap check: its package.json)."""
    for path, dep in entry.npm.items():
        try:
            data = json.loads((directory / path / "package.json").read_text("utf-8"))
        except (OSError, ValueError):
            return False
        if not isinstance(data, dict) or data.get("version") != dep.get("version"):
            return False
    return True


def npm_files_as_locked(home: Path, directory: Path, entry: lockmod.LockEntry) -> bool:
    """Every placed npm file as the store recorded it (re-hashed; none hard-linked to the store)."""
    if not entry.npm:
        return True
    from dshctl.bundles.npm.placed import npm_changes

    return not npm_changes(home, directory, entry.npm)


def same_npm(old: dict, new: dict) -> bool:
    """The same npm packages at the same versions and integrities (placement paths as keys)."""
    def key(d: dict) -> dict:
        return {p: (e.get("version"), e.get("integrity")) for p, e in d.items()}
    return key(old) == key(new)


def declares_dependencies(tree: Path) -> bool:
    """The package.json of ``tree`` asks for npm packages."""
    data = manifest_of(tree)
    return any(isinstance(data.get(k), dict) and data[k]
               for k in ("dependencies", "optionalDependencies"))


def manifest_of(tree: Path) -> dict:
    """The package.json of ``tree`` as an object ({} when missing or not one)."""
    try:
        data = json.loads((tree / "package.json").read_text("utf-8-sig"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
