"""Preset discovery across roots, as dsh's agent-presets package does it (dsh-config.md §7).

Roots are scanned in order; within a root, directories whose names are valid ids are presets (sorted
by ``order`` then id), everything else is skipped. The first root to hold an id wins it, and the copies
in later roots are kept on the winner's ``shadowed`` list instead of being dropped.
"""
from __future__ import annotations

import errno
import os
import stat as stat_mod
from pathlib import Path

from dshctl.core.gcpause import gc_paused
from dshctl.errors import DshctlError, Loc

from .cache import MISSING, ScanCache
from .health import MAX_COMPOSITION_BYTES, composition_health_of, health_of_read_error
from .metadata import parse_metadata, sort_key, unreadable_metadata
from .model import (COMPOSITION_FILE, METADATA_FILE, Health, Metadata, Preset, Root, Roster, Skipped,
                    display_name, is_preset_id)


def discover(roots: list[Root], *, cache: ScanCache | None = None) -> Roster:
    """Scan ``roots`` in precedence order. Never raises for a bad preset or root: see the roster."""
    cache = cache if cache is not None else ScanCache()
    with gc_paused():  # a scan allocates ~2 objects per preset and frees none
        return _discover(roots, cache)


def _discover(roots: list[Root], cache: ScanCache) -> Roster:
    cache.uncached = 0
    seen: dict[str, set[str]] = {"health": set(), "metadata": set()}
    winners: dict[str, Preset] = {}
    roster = Roster(roots=list(roots), presets=[], shadowed=[], skipped=[], root_errors=[])
    for root in roots:
        found = _scan_root(root, cache, seen, roster)
        for preset in sorted(found, key=lambda p: sort_key(p.id, p.metadata)):
            winner = winners.get(preset.id)
            if winner is None:
                winners[preset.id] = preset
                roster.presets.append(preset)
            else:
                preset.shadowed_by = winner
                winner.shadowed.append(preset)
                roster.shadowed.append(preset)
    cache.retain(seen)
    return roster


def _scan_root(root: Root, cache: ScanCache, seen: dict, roster: Roster) -> list[Preset]:
    try:
        with os.scandir(root.path) as it:
            entries = list(it)
    except FileNotFoundError:
        return []  # an absent root (or a dangling link to one) yields nothing
    except OSError as exc:
        cache.uncached += 1
        roster.root_errors.append(root_error(root.path, exc))
        return []
    presets = []
    for entry in entries:
        if not is_preset_id(entry.name):
            _note_skipped(root, entry, roster)
        elif _is_link(entry):
            # dsh lists a root with readdir(withFileTypes) and keeps entries whose Dirent
            # isDirectory(): that is false for a symbolic link, even to a directory.
            roster.skipped.append(Skipped(root, entry.name, Path(entry.path), _link_reason(entry),
                                          notable=True, hint=LINK_HINT))
        elif _is_dir(entry):
            presets.append(load_preset(entry.path, entry.name, root, cache, seen))
        else:
            roster.skipped.append(Skipped(root, entry.name, Path(entry.path), _not_a_dir_reason(entry),
                                          notable=True))
    return presets


def root_error(path: Path, exc: OSError) -> DshctlError:
    """dsh's text, with the error rendered the way Node prints it (``ENOTDIR: not a directory, …``)."""
    code = errno.errorcode.get(exc.errno or 0, "EIO")
    reason = (exc.strerror or str(exc))
    reason = reason[:1].lower() + reason[1:]
    return DshctlError(f"agent-presets: cannot read preset root {path}: {code}: {reason}, scandir '{path}'",
                       loc=Loc(str(path)),
                       hint="make it a readable directory, or remove it from the agent-presets roots")


def _note_skipped(root: Root, entry: os.DirEntry, roster: Roster) -> None:
    name = display_name(entry.name)
    if _undecodable(entry.name):
        roster.skipped.append(Skipped(root, name, Path(entry.path),
                                      "the name is not valid UTF-8, so it cannot be a preset id", True))
        return
    if _is_dir(entry) and os.path.lexists(os.path.join(entry.path, COMPOSITION_FILE)):
        roster.skipped.append(Skipped(root, name, Path(entry.path),
                                      "holds agent.cordis.yml but its name is not a preset id "
                                      "(lowercase letters, digits and '-', not starting with '-')", True))
        return
    roster.skipped.append(Skipped(root, name, Path(entry.path), "not a preset id", False))


LINK_HINT = ("dsh does not follow links in a preset root: move the directory here, or copy it "
             "(`dshctl preset new` copies and dereferences)")


def _is_link(entry: os.DirEntry) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _link_reason(entry: os.DirEntry) -> str:
    if _is_dir(entry):
        return "a symbolic link to a directory; dsh ignores links, so this preset is not in its roster"
    return _not_a_dir_reason(entry)


def _undecodable(name: str) -> bool:
    """os.scandir hands back bytes that are not UTF-8 as lone surrogates (surrogateescape)."""
    return any("\udc80" <= ch <= "\udcff" for ch in name)


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()  # follows symlinks; raises for a loop or a permission problem
    except OSError:
        return False


def _not_a_dir_reason(entry: os.DirEntry) -> str:
    if not entry.is_symlink():
        return "a file, not a preset directory"
    try:
        os.stat(entry.path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop"
        return "a dangling symlink"
    return "a symlink to a file, not a preset directory"


def load_preset(directory: str | Path, preset_id: str, root: Root, cache: ScanCache | None = None,
                seen: dict | None = None) -> Preset:
    """One preset directory: its health and metadata (both cached when a cache is given)."""
    cache = cache if cache is not None else ScanCache()
    seen = seen if seen is not None else {"health": set(), "metadata": set()}
    directory = os.fspath(directory)
    health = _health(directory + _SEP_COMPOSITION, cache, seen)
    metadata = _metadata(directory + _SEP_METADATA, cache, seen)
    return Preset(preset_id, directory, root, metadata, health)


_SEP_COMPOSITION, _SEP_METADATA = os.sep + COMPOSITION_FILE, os.sep + METADATA_FILE


def _read(file: str) -> bytes:
    with open(file, "rb") as fh:
        return fh.read()


def _health(file: str, cache: ScanCache, seen: dict) -> Health:
    try:
        st = os.stat(file)
    except FileNotFoundError:
        return health_of_read_error(None, Path(file), missing=True)
    except OSError as exc:
        cache.uncached += 1
        return health_of_read_error(exc, Path(file))
    seen["health"].add(file)
    value = cache.fresh("health", file, st)  # unchanged: the stamp proves it was a regular file of fine size
    if value is not MISSING:
        return value
    return _health_slow(file, st, cache)


def _health_slow(file: str, st: os.stat_result, cache: ScanCache) -> Health:
    cache.uncached += 1  # until the entry holds the value, below
    if stat_mod.S_ISDIR(st.st_mode):
        return health_of_read_error(IsADirectoryError(errno.EISDIR, "Is a directory"), Path(file))
    if not stat_mod.S_ISREG(st.st_mode):  # a FIFO or device would block or never end
        return health_of_read_error(OSError(errno.EINVAL, "not a regular file"), Path(file))
    if st.st_size > MAX_COMPOSITION_BYTES:
        return health_of_read_error(None, Path(file), size=st.st_size)
    try:
        health = cache.get("health", file, st, lambda: _read(file),
                           lambda data: composition_health_of(data, file))
        cache.uncached -= 1
        return health
    except OSError as exc:
        return health_of_read_error(exc, Path(file))


def composition_health(file: str | Path) -> Health:
    """The health of one ``agent.cordis.yml`` read from disk, exactly as a scan computes it."""
    return _health(os.fspath(file), ScanCache(), {"health": set()})


_NO_METADATA = Metadata()


def _metadata(file: str, cache: ScanCache, seen: dict) -> Metadata:
    try:
        st = os.stat(file)
    except FileNotFoundError:
        return _NO_METADATA
    except OSError as exc:
        cache.uncached += 1
        return unreadable_metadata(exc, Path(file))
    seen["metadata"].add(file)
    value = cache.fresh("metadata", file, st)
    if value is not MISSING:
        return value
    cache.uncached += 1  # until the entry holds the value, below
    if not stat_mod.S_ISREG(st.st_mode) or st.st_size > MAX_COMPOSITION_BYTES:
        return unreadable_metadata(OSError(errno.EINVAL, "not a regular file of sensible size"), Path(file))
    try:
        metadata = cache.get("metadata", file, st, lambda: _read(file),
                             lambda data: parse_metadata(data, file))  # a str: 10,000 Paths cost ~0.1 s
        cache.uncached -= 1
        return metadata
    except OSError as exc:
        return unreadable_metadata(exc, Path(file))


def preset_at(path: Path) -> Preset:
    """A preset given by path (its directory or its agent.cordis.yml), outside any roster."""
    path = Path(os.path.abspath(path))
    directory = path.parent if path.name == COMPOSITION_FILE and not path.is_dir() else path
    root = Root(directory.parent, "user", "path")
    return load_preset(directory, display_name(directory.name), root)
