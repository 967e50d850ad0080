"""All-or-nothing changes to a profile: named steps, an undo log, staging on the same filesystem.

Everything new is first built in a staging directory under ``$DSH_HOME/.dshctl/tmp`` (same
filesystem as the profile, so placing is a rename). Each change to the profile pushes its inverse on
an undo log; any failure, including an injected fault at a named step, replays the log backwards.
The manifest and lock file are written last.

Fault injection (tests): ``DSHCTL_FAULT_STEP=<step>`` or ``fault_at=<step>`` raises at that step;
``write:<n>`` raises just before the n-th write of the run - every write to the profile AND to the
store passes a ``Faults.before_write`` point, so a test can walk n = 1, 2, … until the run succeeds
and thereby fault every single write.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from dshctl.bundles.tree import copy_tree, remove_tree
from dshctl.core.fsutil import atomic_write, file_lock
from dshctl.errors import DshctlError

STEPS = ("resolve", "fetch", "inspect", "stage", "place", "manifest", "lockfile", "commit")
FAULT_ENV = "DSHCTL_FAULT_STEP"


class InjectedFault(DshctlError):
    """Raised by the fault-injection hook; never seen in normal use."""


class Faults:
    """The fault-injection plan of one run, shared by the transaction and the store."""

    def __init__(self, spec: str | None = None):
        self.spec = spec or os.environ.get(FAULT_ENV) or None
        self.writes = 0

    def at_step(self, name: str) -> None:
        if self.spec == name:
            raise InjectedFault(f"injected fault at step {name!r}",
                                hint=f"unset {FAULT_ENV} (fault injection is for tests)")

    def before_write(self, what: str) -> None:
        self.writes += 1
        if self.spec == f"write:{self.writes}":
            raise InjectedFault(f"injected fault before write {self.writes} ({what})",
                                hint=f"unset {FAULT_ENV} (fault injection is for tests)")


def profile_lock(home: Path, profile: str, *, timeout: float = 120.0):
    """Serializes every change to one profile. Kept outside the profile, which may not exist yet."""
    return file_lock(home / ".dshctl" / "locks" / f"profile-{profile}.lock", timeout=timeout,
                     what=f"profile {profile}")


class Transaction:
    def __init__(self, home: Path, profile_dir: Path, *, faults: Faults | None = None):
        self.home = home
        self.dir = profile_dir
        self.faults = faults or Faults()
        self._undo: list[Callable[[], None]] = []
        self._stage: Path | None = None

    # -- steps and faults --------------------------------------------------------------------

    def step(self, name: str) -> None:
        assert name in STEPS, name
        self.faults.at_step(name)

    @property
    def stage(self) -> Path:
        if self._stage is None:
            tmp = self.home / ".dshctl" / "tmp"
            tmp.mkdir(parents=True, exist_ok=True)
            self._stage = Path(tempfile.mkdtemp(prefix="tx-", dir=tmp))
        return self._stage

    @contextlib.contextmanager
    def running(self) -> Iterator["Transaction"]:
        try:
            yield self
        except BaseException:
            self.rollback()
            raise
        finally:
            if self._stage is not None:
                shutil.rmtree(self._stage, ignore_errors=True)

    def rollback(self) -> None:
        while self._undo:
            undo = self._undo.pop()
            with contextlib.suppress(OSError):
                undo()

    # -- changes, each with its inverse ------------------------------------------------------

    def make_dirs(self, path: Path) -> None:
        """Create ``path`` and missing parents; the undo removes only what was created here."""
        missing = []
        p = path
        while not p.exists():
            missing.append(p)
            p = p.parent
        for d in reversed(missing):
            self.faults.before_write(f"mkdir {d}")
            d.mkdir()
            self._undo.append(lambda d=d: d.rmdir())

    def stage_copy(self, src: Path, key: str) -> Path:
        dest = self.stage / "new" / key
        dest.parent.mkdir(parents=True, exist_ok=True)
        copy_tree(src, dest)
        return dest

    def replace_dir(self, target: Path, new: Path | None, key: str) -> None:
        """Put ``new`` at ``target`` (or just take ``target`` away when ``new`` is None)."""
        self.make_dirs(target.parent)
        backup = self.stage / "old" / key
        if target.exists() or target.is_symlink():
            backup.parent.mkdir(parents=True, exist_ok=True)
            self.faults.before_write(f"move {target} aside")
            os.rename(target, backup)
            self._undo.append(lambda: os.rename(backup, target))
        if new is not None:
            self.faults.before_write(f"place {target}")
            os.rename(new, target)
            self._undo.append(lambda: remove_tree(target))

    def write_file(self, path: Path, text: str) -> None:
        """Atomically write ``path``; the undo restores the old bytes or removes a new file."""
        self.make_dirs(path.parent)
        try:
            old: bytes | None = path.read_bytes()
        except FileNotFoundError:
            old = None
        if old is not None and old == text.encode("utf-8"):
            return  # unchanged: leave the file (and its mtime) alone
        self.faults.before_write(f"write {path}")
        atomic_write(path, text)
        if old is None:
            self._undo.append(lambda: path.unlink())
        else:
            self._undo.append(lambda: atomic_write(path, old))

    def write_new_file(self, path: Path, text: str) -> None:
        if not path.exists():
            self.write_file(path, text)
