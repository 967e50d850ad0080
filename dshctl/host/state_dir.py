"""Where a profile's host keeps its runtime files: ``<profile>/.dshctl/`` (socket, last-good)."""
from __future__ import annotations

from pathlib import Path

from dshctl.core.profile import profile_dir

STATE_DIR = ".dshctl"
SOCKET_NAME = "host.sock"
LAST_GOOD_NAME = "last-good.json"


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
