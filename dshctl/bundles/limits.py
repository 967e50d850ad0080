"""Size limits for what one package may unpack to (git trees and npm tarballs alike).

Without them a 200 MB bundle (or a tarball that inflates to gigabytes) would be installed. The
defaults fit every real bundle and npm package we know of; ``--max-package-mb``, ``--max-files``
and ``--max-file-mb`` raise them.
"""
from __future__ import annotations

import os
from pathlib import Path

from dshctl.errors import DshctlError
from dshctl.records import record

MB = 1024 * 1024


@record(frozen=True)
class Limits:
    total_bytes: int = 256 * MB  # also the cap on a downloaded npm tarball (--max-package-mb)
    files: int = 50_000
    file_bytes: int = 128 * MB
    packument_bytes: int = 64 * MB  # one packument as received (--max-packument-mb)


class TooLarge(DshctlError):
    """A package over a size limit; nothing of it is kept."""


class Budget:
    """Counts what a package unpacks to, refusing the first byte or file past a limit."""

    def __init__(self, limits: Limits, what: str):
        self.limits = limits
        self.what = what
        self.total = 0
        self.count = 0

    def add_file(self, path: str, size: int) -> None:
        self.count += 1
        self.total += size
        lim = self.limits
        if size > lim.file_bytes:
            raise TooLarge(f"{self.what}: {path} is {size / MB:.1f} MB, over the per-file limit "
                           f"of {lim.file_bytes / MB:g} MB",
                           hint="raise it with --max-file-mb if you trust this package")
        if self.count > lim.files:
            raise TooLarge(f"{self.what} has more than {lim.files} files",
                           hint="raise the limit with --max-files if you trust this package")
        if self.total > lim.total_bytes:
            raise TooLarge(f"{self.what} unpacks to more than {lim.total_bytes / MB:g} MB",
                           hint="raise the limit with --max-package-mb if you trust this package")


def check_tree(root: Path, limits: Limits, what: str) -> None:
    """Apply the limits to a tree already on disk (a git export in scratch space)."""
    budget = Budget(limits, what)
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                budget.add_file(os.path.relpath(path, root), os.path.getsize(path))
