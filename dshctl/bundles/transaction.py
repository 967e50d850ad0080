"""All-or-nothing changes to a profile: named steps, an undo log, staging on the same filesystem.

Everything new is first built in a staging directory under ``$DSH_HOME/.dshctl/tmp`` (same
filesystem as the profile, so placing is a rename). Each change to the profile pushes its inverse on
an undo log; any failure, including an injected fault at a named step, replays the log backwards.
The log is also a fsynced journal on disk, so a killed run is rolled back by the next one.
The manifest and lock file are written last.

Fault injection (tests): ``DSHCTL_FAULT_STEP=<step>`` or ``fault_at=<step>`` raises at that step;
``write:<n>`` raises just before the n-th write of the run and ``kill:<n>`` SIGKILLs the process
there. Every write to the profile AND to the store passes ``Faults.before_write``, so a test can walk
n = 1, 2, … until the run succeeds and thereby fault every single write.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from dshctl.bundles.tree import copy_tree, remove_tree
from dshctl.core.fsutil import atomic_write, file_lock, home_lock_path
from dshctl.errors import DshctlError

STEPS = ("resolve", "fetch", "inspect", "dependencies", "stage", "place", "manifest", "lockfile", "commit")
FAULT_ENV = "DSHCTL_FAULT_STEP"
JOURNAL = "journal.jsonl"


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
        if self.spec == f"kill:{self.writes}":  # a crash: no exception, no rollback in-process
            os.kill(os.getpid(), signal.SIGKILL)
        if self.spec == f"write:{self.writes}":
            raise InjectedFault(f"injected fault before write {self.writes} ({what})",
                                hint=f"unset {FAULT_ENV} (fault injection is for tests)")


def profile_lock(home: Path, profile: str, *, timeout: float = 120.0):
    """Serializes every change to one profile. Kept outside the profile, which may not exist yet."""
    return file_lock(home_lock_path(home, f"profile-{profile}.lock"), timeout=timeout,
                     what=f"profile {profile}")


def store_use_lock(home: Path, *, exclusive: bool = False, timeout: float = 600.0):
    """Held shared by every run that reads or writes the store for a profile (add, install,
    update, remove), exclusively by ``plugin store prune``: a prune never removes an entry that a
    run has found in the store and is about to place."""
    return file_lock(home_lock_path(home, "store-use.lock"), timeout=timeout, shared=not exclusive,
                     what="the package store (a prune or an install is running)")


class Transaction:
    """One change to a profile. Each write is first logged (write-ahead, fsynced) as the data of
    its inverse in ``<stage>/journal.jsonl``, so a run killed half-way is rolled back by the next
    run on the profile (``recover``); the journal's removal is the commit point."""

    def __init__(self, home: Path, profile_dir: Path, *, faults: Faults | None = None):
        self.home = home
        self.dir = profile_dir
        self.faults = faults or Faults()
        self._undo: list[dict] = []
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
            # not fsynced: nothing is written yet, and the first entry's fsync covers it
            self._append({"profile": str(self.dir)}, sync=False)
        return self._stage

    @contextlib.contextmanager
    def running(self) -> Iterator["Transaction"]:
        try:
            yield self
            if self._stage is not None:
                (self._stage / JOURNAL).unlink()  # the commit point
        except BaseException:
            self.rollback()
            raise
        finally:
            if self._stage is not None:
                shutil.rmtree(self._stage, ignore_errors=True)

    def rollback(self) -> None:
        while self._undo:
            _undo_one(self._undo.pop())

    def _append(self, *entries: dict, sync: bool = True) -> None:
        with open(self.stage / JOURNAL, "a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(entry) + "\n" for entry in entries))
            fh.flush()
            if sync:
                os.fsync(fh.fileno())

    def _log(self, *entries: dict) -> None:
        """Record how to undo the writes about to happen (before they happen): one fsync."""
        self._append(*entries)
        self._undo.extend(entries)

    # -- changes, each with its inverse ------------------------------------------------------

    def make_dirs(self, path: Path) -> None:
        """Create ``path`` and missing parents; the undo removes only what this run created.

        Directories above the profile (``profiles/``) are shared with concurrent runs on other
        profiles: they are created without an undo (never removed by a rollback), and a directory
        another process creates first is simply used (no check-then-create race)."""
        shared = self.dir.parent
        if not path.is_relative_to(shared) or path == shared:
            path.mkdir(parents=True, exist_ok=True)
            return
        shared.mkdir(parents=True, exist_ok=True)
        missing = []
        p = path
        while p != shared and not p.exists():
            missing.append(p)
            p = p.parent
        if not missing:
            return
        # One journal fsync for all of them; an entry for a directory never made is harmless.
        entries = [{"op": "rmdir", "path": str(d)} for d in reversed(missing)]
        self.faults.before_write(f"mkdir {missing[-1]}")
        self._log(*entries)
        for i, (d, entry) in enumerate(zip(reversed(missing), entries)):
            if i:
                self.faults.before_write(f"mkdir {d}")
            try:
                d.mkdir()
            except FileExistsError:
                self._undo.remove(entry)  # made by someone else meanwhile: not ours to remove

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
            self._log({"op": "move_back", "backup": str(backup), "path": str(target)})
            os.rename(target, backup)
        if new is not None:
            self.faults.before_write(f"place {target}")
            self._log({"op": "remove", "path": str(target)})
            os.rename(new, target)

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
        if old is None:
            self._log({"op": "unlink", "path": str(path)})
        else:
            saved = self.stage / "saved" / f"{len(self._undo)}"
            saved.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(saved, old)
            self._log({"op": "restore", "path": str(path), "saved": str(saved)})
        atomic_write(path, text)

    def write_new_file(self, path: Path, text: str) -> None:
        if not path.exists():
            self.write_file(path, text)


def _undo_one(entry: dict) -> None:
    """Undo one logged write; each is harmless when the write itself never happened."""
    path = Path(entry["path"])
    with contextlib.suppress(OSError):
        if entry["op"] == "rmdir":
            path.rmdir()
        elif entry["op"] == "remove":
            remove_tree(path)
        elif entry["op"] == "move_back":
            if os.path.lexists(entry["backup"]) and not os.path.lexists(path):
                os.rename(entry["backup"], path)
        elif entry["op"] == "unlink":
            path.unlink()
        elif entry["op"] == "restore":
            atomic_write(path, Path(entry["saved"]).read_bytes())


def recover(home: Path, profile_dir: Path) -> int:
    """Roll back what killed runs left half-done in ``profile_dir``; call under the profile lock.
    Returns how many interrupted transactions were undone."""
    undone = 0
    for stage in sorted((home / ".dshctl" / "tmp").glob("tx-*")):
        try:
            lines = (stage / JOURNAL).read_text("utf-8").splitlines()
            header = json.loads(lines[0])
        except (OSError, ValueError, IndexError):
            continue  # committed (journal gone) or another run's just-made stage
        if header.get("profile") != str(profile_dir):
            continue
        entries = []
        for line in lines[1:]:
            try:
                entries.append(json.loads(line))
            except ValueError:
                break  # a torn last line: that write was never started
        for entry in reversed(entries):
            _undo_one(entry)
        shutil.rmtree(stage, ignore_errors=True)
        undone += 1
    return undone
