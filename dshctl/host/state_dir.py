"""Where a profile's host keeps its runtime files: ``<profile>/.dshctl/`` (socket, last-good, lock)."""
from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from dshctl.core.compose.profile import profile_dir
from dshctl.errors import DshctlError, Loc

STATE_DIR = ".dshctl"
SOCKET_NAME = "host.sock"
LAST_GOOD_NAME = "last-good.json"
LOCK_NAME = "host.lock"


def state_dir(home: Path, profile: str) -> Path:
    return profile_dir(home, profile) / STATE_DIR


def socket_path(home: Path, profile: str) -> Path:
    return state_dir(home, profile) / SOCKET_NAME


def last_good_path(home: Path, profile: str) -> Path:
    return state_dir(home, profile) / LAST_GOOD_NAME


def ensure(directory: Path) -> Path:
    """Create the state directory (0700) with a ``.gitignore`` of ``*``: runtime files never get committed."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# runtime files of dshctl's host\n*\n")
    return directory


def claim(home: Path, profile: str) -> int:
    """Take the profile's host lock (an flock held for the host's lifetime) and return its fd; closing
    the fd, or the process dying, releases it. A second host is refused here, before it starts any
    row (which could bind ports or overwrite the last-good record of the running one)."""
    path = ensure(state_dir(home, profile)) / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            raise DshctlError("a host is already running for this profile", loc=Loc(str(path)),
                              hint="stop it first, or talk to it with `dshctl status` / `dshctl reload`"
                              ) from None
        raise
    return fd
