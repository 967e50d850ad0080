"""Durable file writes and advisory locks: nothing on disk is ever half-written."""
from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import time
from pathlib import Path
from typing import Iterator

from dshctl.errors import DshctlError, Loc


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def atomic_write(path: str | Path, data: bytes | str, *, mode: int | None = None,
                 durable: bool = True) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory, fsync, then rename.

    The file's permission bits are kept when it exists (``mode`` sets them for a new file).
    Readers see the old content or the new one, never a mix. ``durable=False`` skips both fsyncs:
    for files that check themselves when read (cache entries are sealed with their checksum), where
    a crash may lose the write but never hands a torn file to a reader who trusts it.
    """
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        keep = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        keep = mode if mode is not None else 0o666 & ~_umask()
    import tempfile  # here: a run that only reads its caches never pays for importing it (~5 ms)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.chmod(tmp, keep)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


@contextlib.contextmanager
def file_lock(lock_path: str | Path, *, timeout: float = 30.0, what: str = "this file",
              shared: bool = False) -> Iterator[None]:
    """An exclusive advisory lock (flock) on ``lock_path``, waiting up to ``timeout`` seconds;
    ``shared``: a shared one (many holders at once, none while someone holds it exclusively).

    When the lock had to create the home itself (not just its ``.dshctl/locks/``), a failure of the
    locked block removes the lock file and those directories again: a failed command on a missing
    home leaves nothing behind. Only then is the lock file unlinked: no other process can be waiting
    on a lock in a home that did not exist.
    """
    lock_path = Path(lock_path)
    created = _missing_parents(lock_path.parent)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise DshctlError(f"another dshctl process holds the lock on {what}",
                                      loc=Loc(str(lock_path)),
                                      hint="wait for it to finish, then run the command again") from None
                time.sleep(0.02)
        yield
    except BaseException:
        if any(d.name not in (".dshctl", "locks") for d in created):  # the home itself was missing
            _undo(lock_path, created)
        raise
    finally:
        os.close(fd)  # closing releases the flock


def _missing_parents(directory: Path) -> list[Path]:
    """The ancestors of ``directory`` (itself included) that do not exist, deepest first."""
    missing = []
    while not directory.exists() and directory.parent != directory:
        missing.append(directory)
        directory = directory.parent
    return missing


def _undo(lock_path: Path, created: list[Path]) -> None:
    with contextlib.suppress(OSError):
        lock_path.unlink()
    for directory in created:  # deepest first; stops at the first one the command filled
        if directory.name == "locks":  # the home was this command's: so are the locks beside it
            for other in directory.glob("*.lock"):
                with contextlib.suppress(OSError):
                    other.unlink()
        try:
            directory.rmdir()
        except OSError:
            break


def home_lock_path(home: str | Path, name: str) -> Path:
    """Where a home's lock called ``name`` lives: under ``.dshctl/locks/``, never beside user files."""
    return Path(home) / ".dshctl" / "locks" / name
