"""The file mechanics of a session artifact: publish a new log, append a durable batch, cut a torn tail.

A new log is written to a temp file, fsynced and published with ``link`` (which, unlike ``rename``,
fails when the name exists), then the directory is fsynced. A batch is encoded first, appended with
one ``write`` and fsynced; a failed write or sync truncates back to the previous size, so a batch is
in the file whole or not at all (a kill -9 mid-write leaves at most a torn tail the reader repairs).
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

from dshctl.agents.session import frames
from dshctl.agents.session.records import batch_bytes, header_line


def encode_header(header: dict, compression: str) -> bytes:
    line = (header_line(header) + "\n").encode("utf-8")
    return frames.compress_frame(line) if compression == "zstd" else line


def encode_batch(events: list[dict], compression: str, pack: bool) -> bytes:
    text = batch_bytes(events, pack)
    return frames.compress_frame(text) if compression == "zstd" else text


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path: Path) -> None:
    """Create ``path`` (mode 0700) and its missing parents, each entry made durable."""
    missing = []
    node = path
    while not node.exists():
        missing.append(node)
        node = node.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
        fsync_dir(directory.parent)


def publish_new(path: Path, content: bytes) -> None:
    """Write ``content`` as the new file ``path``; refuses (FileExistsError) when it exists."""
    make_dirs(path.parent)
    tmp = path.with_name(f"{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        _write_all(fd, content)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
        fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def _write_all(fd: int, content: bytes) -> None:
    view = memoryview(content)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def append_durably(path: Path, content: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        before = os.fstat(fd).st_size
        try:
            _write_all(fd, content)
            os.fsync(fd)
        except BaseException:
            os.ftruncate(fd, before)
            os.fsync(fd)
            raise
    finally:
        os.close(fd)


def truncate_durably(path: Path, size: int) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)
