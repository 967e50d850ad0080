"""dshctl's on-disk caches: where they live, how entries are sealed, how they stay small.

Root: ``$XDG_CACHE_HOME/dshctl``, else ``~/.cache/dshctl``; off with ``DSHCTL_CACHE=0`` or
``--no-cache`` (``set_enabled(False)``). Every entry is one file written with
``fsutil.atomic_write`` (concurrent runs see an old entry or a new one, never a mix) and sealed: a
magic line, the SHA-256 of the payload, the payload. An entry that is short, torn, foreign or fails
its checksum is a miss and gets rewritten, which is why entries are written without fsync (a crash
may lose an entry, never hand out a wrong one); a cache that cannot be written is simply not used. Each
cache directory is bounded: after a run wrote to it, the oldest entries (by mtime) are deleted until
it is under its budget.
"""
from __future__ import annotations

import functools
import os

try:  # the SHA-256 of hashlib without importing hashlib (its OpenSSL binding: ~3 ms of a cached run)
    from _sha256 import sha256
except ImportError:  # pragma: no cover - an interpreter without the builtin module
    from hashlib import sha256
from pathlib import Path


MAGIC = b"dshctl-cache 1\n"
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


@functools.lru_cache(maxsize=None)
def code_version() -> str:
    """dshctl's version plus a stamp of its own source files (path, size, mtime): an entry written by
    other code (an upgrade, an edited checkout) is never read as if this code had written it."""
    from dshctl import __version__

    package = Path(__file__).resolve().parents[2]

    h = sha256()
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        prefix = "" if root == str(package) else os.path.relpath(root, package) + os.sep  # once a directory
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(root, name))
                h.update(f"{prefix}{name}:{st.st_size}:{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return f"{__version__}+{h.hexdigest()[:16]}"


def key_digest(*parts: bytes | str) -> str:
    """A file name for a key made of ``parts`` (length-prefixed, so no two keys collide by joining)."""

    h = sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(b"%d:" % len(data))
        h.update(data)
    return h.hexdigest()


class DiskCache:
    """Sealed entries under ``<cache root>/<name>``, at most ``max_bytes`` in all."""

    def __init__(self, name: str, max_bytes: int, *, enabled: bool = True) -> None:
        root = cache_root() if enabled else None
        self.directory = root / name if root is not None else None
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
        try:
            with open(self._file(digest), "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        return unseal(data)

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

    return MAGIC + sha256(payload).hexdigest().encode() + b"\n" + payload


def unseal(data: bytes) -> bytes | None:
    """The payload of a sealed entry, or None when it is not one of ours or is damaged."""
    head = len(MAGIC) + 65
    if len(data) < head or not data.startswith(MAGIC) or data[head - 1:head] != b"\n":
        return None
    payload = data[head:]

    if sha256(payload).hexdigest().encode() != data[len(MAGIC):head - 1]:
        return None
    return payload


def _scandir(path: str | Path) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return [e for e in it if not e.name.startswith(".")]
    except OSError:
        return []
