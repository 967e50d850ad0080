"""A scan cache: parse a file again only when its content really changed.

Each entry is keyed on the file's path and remembers its stat stamp and the SHA-256 of its bytes.
A lookup whose stamp (mtime, size, plus ctime and inode) is unchanged is a hit without reading the
file. ctime is in the stamp because a user cannot set it: an edit that restores the old mtime and
size still moves ctime, so the file is read again and its hash decides. A touched but unchanged file
(same hash) keeps its parsed result and only refreshes the stamp.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

T = TypeVar("T")

Stamp = tuple[int, int, int, int]


@dataclass
class _Entry:
    stamp: Stamp
    digest: str
    value: Any


class ScanCache:
    """Parsed results by (kind, path). Not thread-safe; one per scanning process."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], _Entry] = {}
        self.hits = 0  # stamp unchanged: no read
        self.rehashed = 0  # stamp changed, content identical: no parse
        self.parsed = 0  # content new or changed

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, kind: str, path: str | Path, st: os.stat_result, read: Callable[[], bytes],
            build: Callable[[bytes], T]) -> T:
        """The cached value for ``path``, else ``build(read())``. ``read`` may raise OSError."""
        key = (kind, os.fspath(path))
        stamp = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
        entry = self._entries.get(key)
        if entry is not None and entry.stamp == stamp:
            self.hits += 1
            return entry.value
        data = read()
        digest = hashlib.sha256(data).hexdigest()
        if entry is not None and entry.digest == digest:
            entry.stamp = stamp
            self.rehashed += 1
            return entry.value
        value = build(data)
        self._entries[key] = _Entry(stamp, digest, value)
        self.parsed += 1
        return value

    def retain(self, keys: set[tuple[str, str]]) -> None:
        """Drop entries for files the last scan did not see (deleted presets)."""
        for key in [k for k in self._entries if k not in keys]:
            del self._entries[key]
