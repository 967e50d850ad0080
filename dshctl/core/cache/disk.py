"""dshctl's on-disk caches: where they live, how entries are sealed, how they stay small.

Root: ``$XDG_CACHE_HOME/dshctl``, else ``~/.cache/dshctl``; off with ``DSHCTL_CACHE=0`` or
``--no-cache`` (``set_enabled(False)``). Every entry is one file written with
``fsutil.atomic_write`` (concurrent runs see an old entry or a new one, never a mix) and sealed: a
magic line, the BLAKE2b-256 of the payload, the payload. An entry that is short, torn, foreign or fails
its checksum is a miss and gets rewritten, which is why entries are written without fsync (a crash
may lose an entry, never hand out a wrong one); a cache that cannot be written is simply not used. Each
cache directory is bounded: after a run wrote to it, the oldest entries (by mtime) are deleted until
it is under its budget.
"""
from __future__ import annotations

import functools
import os
import stat

try:  # hashlib's BLAKE2b without importing hashlib (its OpenSSL binding: ~3 ms of a cached run);
    from _blake2 import blake2b   # 2.7x the builtin SHA-256's speed here, and a third of its import
except ImportError:  # pragma: no cover - an interpreter without the builtin module
    from hashlib import blake2b
from pathlib import Path


MAGIC = b"dshctl-cache 2\n"   # 2: BLAKE2b-256 seals and keys (1 was SHA-256)
_DISABLED = False


def set_enabled(enabled: bool) -> None:
    """``--no-cache`` (the root option sets this on every invocation): no cache is read or written."""
    global _DISABLED
    _DISABLED = not enabled


def cache_root() -> Path | None:
    if _DISABLED or os.environ.get("DSHCTL_CACHE", "1") == "0":
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dshctl"


def new_hash(data: bytes = b""):
    """The hash of every seal and key: BLAKE2b with a 256-bit digest."""
    return blake2b(data, digest_size=32)


@functools.lru_cache(maxsize=None)
def code_version() -> str:
    """dshctl's version plus a stamp of its own source files (path, size, mtime): an entry written by
    other code (an upgrade, an edited checkout) is never read as if this code had written it."""
    from dshctl import __version__

    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    rows: list[str] = []
    _stamp_sources(package, "", rows)
    stamp = new_hash("\n".join(rows).encode("utf-8", "surrogateescape")).hexdigest()
    return f"{__version__}+{stamp[:16]}"


def _stamp_sources(directory: str, prefix: str, rows: list[str]) -> None:
    """``rows`` gains ``relative path:size:mtime_ns`` of every ``.py`` file under ``directory``, in
    name order (one scandir per directory: its entries carry the stat, ~150 files in 1.5 ms)."""
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.endswith(".py") and entry.is_file():
            st = entry.stat()
            rows.append(f"{prefix}{entry.name}:{st.st_size}:{st.st_mtime_ns}")
        elif entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
            _stamp_sources(entry.path, prefix + entry.name + os.sep, rows)


def key_prefix(*parts: bytes | str):
    """The hash state after ``parts``: a key's fixed parts hashed once, extended per entry
    (``extend_key``), as if all had been handed to ``key_digest`` together."""
    h = new_hash()
    _feed(h, parts)
    return h


def extend_key(prefix, *parts: bytes | str) -> str:
    h = prefix.copy()
    _feed(h, parts)
    return h.hexdigest()


def key_digest(*parts: bytes | str) -> str:
    """A file name for a key made of ``parts`` (length-prefixed, so no two keys collide by joining)."""
    return key_prefix(*parts).hexdigest()


def _feed(h, parts) -> None:
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(b"%d:" % len(data))
        h.update(data)


def read_regular(path: str, max_size: int) -> bytes | None:
    """The bytes of ``path`` when it is a regular file of at most ``max_size`` bytes, else None:
    one open (non-blocking, so a FIFO never hangs it), one fstat, one read when the file is as fstat
    says (a second syscall to see the end costs ~0.5 ms of a cached lint's 240 reads)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_size:
            return None
        chunks, total = [], 0
        while True:   # asks one byte more than fstat said: ending at that size is the end
            chunk = os.read(fd, st.st_size - total + 1 if total <= st.st_size else 1 << 16)
            chunks.append(chunk)
            total += len(chunk)
            if total > max_size:
                return None
            if not chunk or total == st.st_size:   # else it grew, or a short read: read on
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


class DiskCache:
    """Sealed entries under ``<cache root>/<name>``, at most ``max_bytes`` in all."""

    def __init__(self, name: str, max_bytes: int, *, enabled: bool = True) -> None:
        root = cache_root() if enabled else None
        self.directory = root / name if root is not None else None
        self._where = str(self.directory) + os.sep if self.directory is not None else ""
        self.max_bytes = max_bytes
        self.wrote = False

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    def _file(self, digest: str) -> Path:
        assert self.directory is not None
        return self.directory / digest[:2] / digest

    def get(self, digest: str) -> bytes | None:
        if self.directory is None:
            return None
        data = read_regular(f"{self._where}{digest[:2]}{os.sep}{digest}", 1 << 40)
        return unseal(data) if data is not None else None

    def put(self, digest: str, payload: bytes) -> None:
        if self.directory is None:
            return
        path = self._file(digest)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            from dshctl.core import fsutil

            fsutil.atomic_write(path, seal(payload), durable=False)  # sealed: a torn entry is a miss
            self.wrote = True
        except OSError:
            pass  # a read-only or full disk: the cache is just not used

    def prune(self) -> None:
        """Delete the oldest entries until the directory is within its budget (after writes only)."""
        if self.directory is None or not self.wrote:
            return
        entries = []
        for sub in _scandir(self.directory):
            for entry in _scandir(sub.path):
                try:
                    st = entry.stat()
                except OSError:
                    continue
                entries.append((st.st_mtime_ns, st.st_size, entry.path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            try:
                os.unlink(path)
            except OSError:
                continue
            total -= size


def seal(payload: bytes) -> bytes:
    return MAGIC + new_hash(payload).hexdigest().encode() + b"\n" + payload


def unseal(data: bytes) -> bytes | None:
    """The payload of a sealed entry, or None when it is not one of ours or is damaged."""
    head = len(MAGIC) + 65
    if len(data) < head or not data.startswith(MAGIC) or data[head - 1:head] != b"\n":
        return None
    payload = data[head:]
    if new_hash(payload).hexdigest().encode() != data[len(MAGIC):head - 1]:
        return None
    return payload


def _scandir(path: str | Path) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return [e for e in it if not e.name.startswith(".")]
    except OSError:
        return []
