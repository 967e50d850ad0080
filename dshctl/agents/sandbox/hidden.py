"""What a confined process never reads: the host's secrets, as paths, and the read grants that leave
them out.

bubblewrap hides a path by mounting an empty tmpfs over it. Landlock can only *allow*, so "everything
but these paths" becomes the set of largest subtrees that contain no hidden path
(:func:`readable_subtrees`) — the complement, computed by walking down only along hidden paths' ancestors.
"""
from __future__ import annotations

import os
from typing import Callable, Iterable

from .policy import canonical


def secret_paths(extra: Iterable[str] = (), environ: dict | None = None) -> list[str]:
    """The host's state a confined process must not read, canonical and deduplicated: the user's home
    (credentials, shell history, ``~/.dsh``), the dsh home wherever ``$DSH_HOME`` puts it (every
    session's log), the XDG state/config/data/cache directories, plus ``extra``. /proc/<pid>/environ of
    the host is not here: each backend fences other processes' /proc entries its own way."""
    from dshctl.core.home import resolve_home
    env = os.environ if environ is None else environ
    found = [os.path.expanduser("~"), str(resolve_home())]
    for name in ("DSH_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        value = env.get(name, "").strip()
        if value and os.path.isabs(os.path.expanduser(value)):
            found.append(os.path.expanduser(value))
    found.extend(extra)
    out: list[str] = []
    for path in found:
        path = canonical(path)
        if path != "/" and path not in out:
            out.append(path)
    return out


def is_within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def readable_subtrees(root: str, hidden: Iterable[str],
                      list_dir: Callable[[str], list[tuple[str, bool]]] | None = None) -> list[str]:
    """The largest subtrees of ``root`` that hold no hidden path; together they cover every path under
    ``root`` except the hidden ones and their ancestors' own entries (a directory on the way to a
    hidden path is traversable but not listable). ``list_dir(path)`` gives (name, is_real_dir) pairs;
    symlinks count as non-directories and are left out (a grant through one would follow it, possibly
    into a hidden path; their targets are granted where they live)."""
    hidden = [h for h in hidden if h]
    lister = list_dir or _list_dir
    out: list[str] = []

    def walk(path: str) -> None:
        if any(is_within(path, h) for h in hidden):
            return
        if not any(is_within(h, path) for h in hidden):
            out.append(path)
            return
        for name, is_dir in lister(path):
            child = os.path.join(path, name)
            if is_dir:
                walk(child)
            elif not any(child == h for h in hidden):
                out.append(child)
    walk(root)
    return out


def _list_dir(path: str) -> list[tuple[str, bool]]:
    try:
        with os.scandir(path) as entries:
            return [(e.name, e.is_dir(follow_symlinks=False)) for e in entries if not e.is_symlink()]
    except OSError:
        return []
