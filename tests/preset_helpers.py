"""Helpers shared by the preset tests: a privilege drop for "unreadable" cases (we run as root)."""
from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from pathlib import Path

import pytest


def run_as_nobody(func):
    """``func()`` in a forked child that dropped root (chmod 000 does not stop root). Returns its
    result (a string); the child never execs, so it needs no access to the interpreter's files."""
    if os.geteuid() != 0:
        return func()
    nobody = pwd.getpwnam("nobody")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        status = 0
        try:
            os.close(read_fd)
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            os.write(write_fd, str(func()).encode())
        except BaseException as exc:  # noqa: BLE001 - report anything to the parent
            os.write(write_fd, f"child failed: {exc!r}".encode())
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as fh:
        out = fh.read().decode()
    os.waitpid(pid, 0)
    return out


@pytest.fixture
def open_dir():
    """A temp directory `nobody` can reach (pytest's own tmp tree is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="dshctl-presets-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
