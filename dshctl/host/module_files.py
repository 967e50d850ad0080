"""Which file each loaded module came from, resolved once per module object (issue 30).

The module reloader asks this after every applied config reload (new rows may have imported new plugin
modules) and at the start of every module pass. Resolving every module's ``__file__`` each time
(``Path.resolve()``: one ``lstat`` per path component, ~450 modules) was 50-80 ms per reload under
``host run``. A module's file does not change while the module object lives (a hot swap puts a new
object in ``sys.modules``), so each entry is keyed by the object's identity and its ``__file__`` and
resolved only when one of them differs from what was last seen; a pass over ``sys.modules`` that finds
nothing new costs a dict lookup per module.
"""
from __future__ import annotations

import sys
import sysconfig
from pathlib import Path
from typing import Any, Iterator

from .hmr_graph import module_file

_SYSTEM_DIRS = tuple({str(Path(p).resolve()) for p in (sysconfig.get_paths()["stdlib"],
                                                        sysconfig.get_paths()["purelib"],
                                                        sysconfig.get_paths()["platlib"])})


def is_framework(name: str) -> bool:
    return name == "dshctl" or name.startswith("dshctl.")


def is_local_file(name: str, path: Path | None) -> bool:
    """A module the host may hot-swap: a file outside the standard library, site-packages and dshctl."""
    return path is not None and not is_framework(name) and not str(path).startswith(_SYSTEM_DIRS)


class Entry:
    __slots__ = ("key", "module", "path", "local")

    def __init__(self, key: tuple[int, Any], module: Any, path: Path | None, local: bool):
        self.key, self.module, self.path, self.local = key, module, path, local


class LoadedModules:
    """A view of ``sys.modules``: name -> (module, resolved ``.py`` file or None, local?)."""

    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}

    def sync(self) -> list[str]:
        """Catch up with ``sys.modules``; the names whose module object or ``__file__`` is new."""
        fresh = []
        entries = self._entries
        current = list(sys.modules.items())
        for name, module in current:
            key = (id(module), getattr(module, "__file__", None))
            entry = entries.get(name)
            if entry is not None and entry.key == key and entry.module is module:
                continue
            path = module_file(module)
            entries[name] = Entry(key, module, path, is_local_file(name, path))
            fresh.append(name)
        if fresh or len(entries) > len(current):
            live = sys.modules
            for name in [n for n in entries if n not in live]:
                del entries[name]
        return fresh

    def path(self, name: str) -> Path | None:
        entry = self._entries.get(name)
        return entry.path if entry is not None else None

    def is_watched(self, name: str) -> bool:
        """Local modules and dshctl's own (a change to the latter asks for a restart)."""
        entry = self._entries.get(name)
        return entry is not None and entry.path is not None and (entry.local or is_framework(name))

    def with_files(self) -> Iterator[tuple[str, Any, Path]]:
        for name, entry in self._entries.items():
            if entry.path is not None:
                yield name, entry.module, entry.path

    def local(self) -> dict[str, Any]:
        return {name: e.module for name, e in self._entries.items() if e.local}

    def framework(self) -> set[str]:
        return {name for name in self._entries if is_framework(name)}
