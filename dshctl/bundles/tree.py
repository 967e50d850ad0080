"""Package trees on disk: a content hash that ``verify`` can recheck, and a link-safe copy."""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path


def file_digests(root: Path, skip: frozenset[str] | set[str] = frozenset()) -> dict[str, str]:
    """``relative path -> digest`` for every file and link under ``root`` (links are never followed).

    ``skip`` holds relative directory paths left out (a bundle's placed npm dependencies).

    A file's digest is ``x:``/``f:`` (executable or not) plus the sha256 of its bytes; a link's is
    ``l:`` plus its target.
    """
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for name in dirnames + filenames:
            path = base / name
            rel = path.relative_to(root).as_posix()
            if rel in skip:
                if name in dirnames:
                    dirnames.remove(name)
                continue
            if path.is_symlink():
                out[rel] = "l:" + os.readlink(path)
                if name in dirnames:
                    dirnames.remove(name)  # os.walk would not descend, but be explicit
            elif name in filenames:
                st = path.stat()
                kind = "x" if st.st_mode & 0o111 else "f"
                out[rel] = f"{kind}:{_sha256_file(path)}"
    return dict(sorted(out.items()))


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tree_hash(digests: dict[str, str]) -> str:
    """One ``sha256-…`` value for a whole tree, from its per-file digests."""
    h = hashlib.sha256()
    for rel, digest in sorted(digests.items()):
        h.update(rel.encode("utf-8") + b"\0" + digest.encode("utf-8") + b"\n")
    return "sha256-" + h.hexdigest()


def diff_digests(expected: dict[str, str], actual: dict[str, str]) -> dict[str, list[str]]:
    return {
        "modified": sorted(p for p in expected if p in actual and actual[p] != expected[p]),
        "missing": sorted(p for p in expected if p not in actual),
        "added": sorted(p for p in actual if p not in expected),
    }


def copy_tree(src: Path, dest: Path) -> None:
    """Copy a package; links are copied as links, never followed."""
    shutil.copytree(src, dest, symlinks=True)


def remove_tree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
