"""File access inside a workspace that a concurrent symlink swap cannot redirect (issue 28).

``Workspace.resolve`` checks a path once; a directory swapped for a link to the outside between
that check and the open used to let ``write_file`` create files outside the root (found by the
hostile-model corpus: 2 of 1,000 writes under a moving directory). So the resolved path is walked
again from the root one component at a time with ``O_NOFOLLOW`` directory descriptors, and the
file is opened, created and renamed relative to its parent's descriptor: a component that became a
link meanwhile fails the call instead of leading out.
"""
from __future__ import annotations

import errno
import os
import secrets
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .workspace import OutsideWorkspace

_DIR = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _moved(path: str) -> OutsideWorkspace:
    return OutsideWorkspace(f"path {path!r} changed while the call ran (a link appeared on the way); "
                            "refused")


@contextmanager
def parent_dir(root: Path, target: Path, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """(descriptor of ``target``'s parent, walked without following links; ``target``'s name)."""
    parts = target.relative_to(root).parts
    if not parts:
        raise IsADirectoryError(str(target))
    fd = os.open(root, _DIR)
    try:
        for part in parts[:-1]:
            if create:
                try:
                    os.mkdir(part, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                child = os.open(part, _DIR, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _moved(str(target.relative_to(root))) from None
                raise
            os.close(fd)
            fd = child
        yield fd, parts[-1]
    finally:
        os.close(fd)


@contextmanager
def open_dir(root: Path, target: Path) -> Iterator[int]:
    if target == root:
        fd = os.open(root, _DIR)
        try:
            yield fd
        finally:
            os.close(fd)
        return
    with parent_dir(root, target) as (parent, name):
        try:
            fd = os.open(name, _DIR, dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _moved(str(target.relative_to(root))) from None
            raise
        try:
            yield fd
        finally:
            os.close(fd)


def read_bytes(root: Path, target: Path, limit: int | None = None) -> tuple[bytes, int]:
    """(the bytes, up to ``limit``; the file's size), opened without following a swapped link."""
    with parent_dir(root, target) as (parent, name):
        try:
            fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _moved(str(target.relative_to(root))) from None
            raise
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(str(target))
            return f.read() if limit is None else f.read(limit), info.st_size


def write_atomic(root: Path, target: Path, data: bytes) -> None:
    """Temp file beside ``target``, fsync, rename: all relative to the walked parent descriptor."""
    with parent_dir(root, target, create=True) as (parent, name):
        try:
            mode = stat.S_IMODE(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     mode, dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=parent)
            except OSError:
                pass
            raise
        os.fsync(parent)
