"""A cache of rendered ``profile dump`` output, keyed on every input file's (path, mtime, size, inode).

Parsing dominates a dump of a large profile (see docs/performance.md), so ``profile dump`` stores its
output together with the stat of every file the composition depended on: the profile manifest, each
bundle's manifest and patch file, every place bundle resolution looked *before* the package it found
(a package appearing there would change the result), both user layers (present or absent) and the
``--patch`` files. A hit requires all of them unchanged. Like git's "racily clean" rule, nothing is
cached while an input is younger than two seconds, since a same-size rewrite within the filesystem's
timestamp granularity would otherwise go unnoticed.

Disable with ``DSHCTL_CACHE=0`` or ``--no-cache``; the directory is ``$DSHCTL_CACHE_DIR``, else
``$XDG_CACHE_HOME/dshctl/dump``, else ``~/.cache/dshctl/dump``.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Sequence

from dshctl.core.cache import disk as diskcache

RACY_SECONDS = 2.0
# Bump when the stored output's shape changes, so entries written by an older dshctl are not used.
ENTRY_FORMAT = 2


def cache_dir() -> Path | None:
    root = diskcache.cache_root()  # None under DSHCTL_CACHE=0 or --no-cache
    if root is None:
        return None
    if os.environ.get("DSHCTL_CACHE_DIR"):
        return Path(os.environ["DSHCTL_CACHE_DIR"])
    return root / "dump"


def _stat(path: Path) -> list | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _entry_file(key: dict[str, Any]) -> Path | None:
    directory = cache_dir()
    if directory is None:
        return None
    import hashlib

    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    return directory / f"{digest}.json"


def make_key(home: Path, profile: str, patches: Sequence[Path], default_only: bool,
             bundle_roots: Sequence[Path], fmt: str) -> dict[str, Any]:
    return {"version": diskcache.code_version(), "entry_format": ENTRY_FORMAT, "home": str(Path(home).resolve()), "profile": profile,
            "patches": [os.path.abspath(p) for p in patches], "default_only": default_only,
            "roots": [os.path.abspath(r) for r in bundle_roots], "format": fmt}


def lookup(key: dict[str, Any]) -> dict[str, Any] | None:
    """The stored output when every recorded input is unchanged."""
    entry = _entry_file(key)
    if entry is None:
        return None
    try:
        data = json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("key") != key:
        return None
    for path, stat in data.get("deps", []):
        if _stat(Path(path)) != stat:
            return None
    return data.get("output")


def store(key: dict[str, Any], comp, output: dict[str, Any], bundle_roots: Sequence[Path]) -> None:
    """Record ``output`` with the inputs of ``comp``; silently skipped when it cannot be cached."""
    entry = _entry_file(key)
    if entry is None:
        return
    deps = _dependencies(comp, bundle_roots)
    now = time.time_ns()
    if any(stat is not None and now - stat[0] < RACY_SECONDS * 1e9 for _, stat in deps):
        return
    from dshctl.core import fsutil

    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fsutil.atomic_write(entry, json.dumps({"key": key, "deps": deps, "output": output}))
    except OSError:
        pass  # a cache that cannot be written is just not used


def _dependencies(comp, bundle_roots: Sequence[Path]) -> list[list]:
    from dshctl.core.compose.layers import BUNDLE, HOME_LAYER, PROFILE_LAYER
    from dshctl.core.compose.profile import bundle_candidates, profile_dir

    home = Path(comp.home)
    pdir = profile_dir(home, comp.profile)
    paths: list[Path] = [pdir / "package.json", pdir / PROFILE_LAYER, home / HOME_LAYER]
    for layer in comp.layers:
        if layer.path is not None:
            paths.append(Path(layer.path))
        if layer.kind == BUNDLE and layer.bundle_dir is not None:
            for candidate in bundle_candidates(layer.label, pdir, bundle_roots):
                paths.append(candidate / "package.json")
                if candidate == layer.bundle_dir:
                    break
    seen: dict[str, list | None] = {}
    for p in paths:
        seen.setdefault(str(p), _stat(p))
    return [[p, s] for p, s in seen.items()]
