"""A scan cache: parse a file again only when its content really changed.

Each entry is keyed on the file's path and remembers its stat stamp and the SHA-256 of its bytes.
A lookup whose stamp (mtime, size, plus ctime and inode) is unchanged is a hit without reading the
file. ctime is in the stamp because a user cannot set it: an edit that restores the old mtime and
size still moves ctime, so the file is read again and its hash decides. A touched but unchanged file
(same hash) keeps its parsed result and only refreshes the stamp.

Entries live in one table per kind ("health", "metadata"), keyed by the path string, so the
re-scan's fast path (``fresh``) allocates nothing for an unchanged file.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

T = TypeVar("T")

Stamp = tuple[int, int, int, int]
MISSING: Any = object()


def stamp_of(st: os.stat_result) -> Stamp:
    return (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)


@dataclass
class Entry:
    stamp: Stamp
    digest: str
    value: Any


class ScanCache:
    """Parsed results by kind and path. Not thread-safe; one per scanning process."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, Entry]] = {}
        self.hits = 0  # stamp unchanged: no read
        self.rehashed = 0  # stamp changed, content identical: no parse
        self.parsed = 0  # content new or changed
        self.dirty = False  # an entry was added, refreshed or dropped since the cache was loaded
        # results of the last scan that no entry holds (a stat or read error, a FIFO, an oversized
        # file): while it is 0, every value the scan used is the value of its entry (rendering.py)
        self.uncached = 0

    def __len__(self) -> int:
        return sum(map(len, self.tables.values()))

    def table(self, kind: str) -> dict[str, Entry]:
        return self.tables.setdefault(kind, {})

    def fresh(self, kind: str, path: str, st: os.stat_result) -> Any:
        """The cached value when the stamp is unchanged (no read), else ``MISSING``."""
        entry = self.table(kind).get(path)
        if entry is not None and entry.stamp == (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino):
            self.hits += 1
            return entry.value
        return MISSING

    def get(self, kind: str, path: str | Path, st: os.stat_result, read: Callable[[], bytes],
            build: Callable[[bytes], T]) -> T:
        """The cached value for ``path``, else ``build(read())``. ``read`` may raise OSError."""
        path = os.fspath(path)
        value = self.fresh(kind, path, st)
        if value is not MISSING:
            return value
        table = self.table(kind)
        entry = table.get(path)
        data = read()
        digest = hashlib.sha256(data).hexdigest()
        self.dirty = True
        if entry is not None and entry.digest == digest:
            entry.stamp = stamp_of(st)
            self.rehashed += 1
            return entry.value
        value = build(data)
        table[path] = Entry(stamp_of(st), digest, value)
        self.parsed += 1
        return value

    def retain(self, seen: dict[str, set[str]]) -> None:
        """Drop entries for files the last scan did not see (deleted presets)."""
        for kind, table in self.tables.items():
            keep = seen.get(kind, set())
            if keep.issuperset(table):
                continue  # the common case, checked in C
            for path in [p for p in table if p not in keep]:
                del table[path]
            self.dirty = True
