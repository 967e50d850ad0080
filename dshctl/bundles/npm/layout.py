"""Where resolved packages go on disk: npm's hoisted ``node_modules`` rooted at the bundle.

Each bundle gets its own tree, ``<profile>/node_modules/<bundle>/node_modules/…``, exactly as
``npm install`` run inside the bundle's directory would lay it out. Node resolves ``require``,
``import`` and ``exports`` maps by walking up ``node_modules`` directories from the importing file,
so every package finds the version placed for it, and the profile's top-level ``node_modules`` stays
what dsh expects there: the bundles themselves. The whole bundle directory, dependencies included,
is built in the transaction's staging area and placed with one rename.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from dshctl.bundles.npm.names import is_inside, is_valid_name
from dshctl.bundles.package import _valid_name
from dshctl.bundles.tree import copy_tree
from dshctl.errors import DshctlError

_SEGMENT = re.compile(r"node_modules/((?:@[^/]+/)?[^/]+)")


def check_path(path: str) -> bool:
    """``node_modules/a(/node_modules/@s/b)*`` with valid package names: a lock file from anywhere
    must not place a tree outside the bundle."""
    pos, names = 0, []
    while pos < len(path):
        m = _SEGMENT.match(path, pos)
        if not m or not _valid_name(m.group(1)) or not is_valid_name(m.group(1)):
            return False
        names.append(m.group(1))
        pos = m.end()
        if pos < len(path):
            if path[pos] != "/":
                return False
            pos += 1
    return bool(names) and not path.endswith("/")


def name_of(path: str) -> str:
    return _SEGMENT.findall(path)[-1]


def populate(bundle_dir: Path, trees: dict, store) -> None:
    """Put each package at ``bundle_dir/<path>``, shallow paths first: a git dependency's stored
    tree copied, an npm package unpacked there by ``store`` (an ``NpmStore``). Every path is
    checked before anything is written: a path from registry data or a lock lands inside the
    bundle's ``node_modules`` (no ``..``, no vendored link leading out), or nothing is placed."""
    vendored = bundle_dir / "node_modules"
    bad = [path for path in trees if not check_path(path)]
    if bad:
        _refuse(bad[0], vendored)
    if trees:
        if vendored.is_symlink() or vendored.is_file():
            vendored.unlink()
    for path in sorted(trees, key=lambda p: (p.count("/"), p)):
        dest = bundle_dir / path
        _check_placement(vendored, dest, path)  # before removing or writing anything there
        if os.path.lexists(dest):  # a vendored copy in the bundle's own tree: npm replaces it
            shutil.rmtree(dest) if dest.is_dir() and not dest.is_symlink() else dest.unlink()
        dest.parent.mkdir(parents=True, exist_ok=True)
        source = trees[path]
        if isinstance(source, Path):
            copy_tree(str(source), str(dest))
        else:
            store.place(source, dest)


def _check_placement(root: Path, dest: Path, path: str) -> None:
    if not is_inside(root, dest.parent / "x"):  # through a vendored link leading out
        _refuse(path, root)


def _refuse(path: str, root: Path):
    raise DshctlError(f"refusing to place the npm package path {path!r}: it would land "
                      f"outside {root}", hint="the lock file or the registry metadata is "
                      "hostile or damaged; nothing was placed")
