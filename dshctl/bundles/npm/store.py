"""npm tarballs in the content-addressed store, keyed by integrity and shared by all profiles.

    store/npm/tarballs/<algo>-<hex>.tgz   the tarball as the registry sent it (checked)
    store/npm/trees/<algo>-<hex>/         its safe extraction
    store/npm/trees/<algo>-<hex>.json     {"name", "version", "integrity", "scripts", "files"}:
                                          written last; "files" maps each path to its digest
                                          as extracted (tree.file_digests)

Store files are read-only and profiles get copies of them (layout.populate), so no edit in a
profile reaches the store; ``plugin store verify`` re-hashes both against these records.

A tarball is downloaded (in threads), checked against its integrity, extracted into scratch space
and inspected there; only a package that passed every check is renamed into the store (under
``store.lock``), so a refused package never reaches it. A tree counts once its ``.json`` exists.
"""
from __future__ import annotations

import json
import os
import shutil
import time
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dshctl.bundles.limits import Limits, TooLarge
from dshctl.bundles.npm import integrity as sri
from dshctl.bundles.npm.registry import FetchFailed, Registry, TooBig
from dshctl.bundles.npm.scripts import install_scripts
from dshctl.bundles.store import write_unsynced  # no fsync: one per package made installs I/O-bound
from dshctl.bundles.transaction import Faults
from dshctl.core.fsutil import file_lock
from dshctl.errors import DshctlError


@dataclass(frozen=True)
class Wanted:
    """One package to have in the store; ``needed_by`` names it in messages."""
    name: str
    version: str
    resolved: str
    integrity: str
    needed_by: str


@dataclass(frozen=True)
class StoredTree:
    path: Path
    scripts: dict[str, str]
    files: dict[str, str] | None = None  # path -> digest (tree.file_digests) as extracted


class NpmStore:
    def __init__(self, home: Path, faults: Faults | None = None, limits: Limits | None = None):
        self.root = home / ".dshctl" / "store" / "npm"
        self.lock_path = home / ".dshctl" / "store" / "store.lock"
        self.faults = faults or Faults()
        self.limits = limits or Limits()
        self._early: dict = {}  # integrity -> Future of a download started during resolution
        self._early_pool = None  # a ThreadPoolExecutor once a download starts
        self._early_dir: Path | None = None  # where early downloads stream to

    def download_early(self, registry: Registry, want: Wanted) -> None:
        """Start downloading a package the resolver just placed, so the network overlaps the
        resolution (as pnpm does). Into this run's own download directory (``tmp/dl-*``), never
        the store: ``ensure_all`` checks and unpacks the file under the store lock; a failure is
        reported there, by the normal path, with the package's context."""
        if want.integrity in self._early or self.get(want) is not None:
            return
        if self._early_pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._early_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="early")
        dest = self._download_dir() / f"{len(self._early)}.tgz"
        self._early[want.integrity] = self._early_pool.submit(
            lambda: (registry.tarball_to(want.resolved, dest), dest)[1])

    def _download_dir(self) -> Path:
        if self._early_dir is None:
            (self.root / "tmp").mkdir(parents=True, exist_ok=True)
            self._early_dir = Path(tempfile.mkdtemp(prefix="dl-", dir=self.root / "tmp"))
        return self._early_dir

    def close(self) -> None:
        if self._early_pool is not None:
            self._early_pool.shutdown(wait=True, cancel_futures=True)
            self._early_pool = None
        self._early.clear()
        if self._early_dir is not None:
            shutil.rmtree(self._early_dir, ignore_errors=True)
            self._early_dir = None

    def _key(self, want: Wanted) -> str:
        try:
            return sri.store_key(want.integrity)
        except sri.IntegrityError as exc:
            raise DshctlError(f"{want.name}@{want.version} needed by {want.needed_by}: {exc}",
                              hint="the lock file or the registry metadata is damaged") from None

    def get(self, want: Wanted) -> StoredTree | None:
        key = self._key(want)
        tree = self.root / "trees" / key
        try:
            meta = json.loads((self.root / "trees" / f"{key}.json").read_text("utf-8"))
        except (OSError, ValueError):
            return None
        return StoredTree(tree, meta.get("scripts") or {}, meta.get("files")) \
            if tree.is_dir() else None

    def recorded_files(self, integrity: str) -> dict[str, str] | None:
        """The digests of the stored tree's files as they came out of the checked tarball; for an
        entry stored before dshctl recorded them, derived again from its tarball (re-checked
        against ``integrity``; a repair records it). None when neither is in the
        store or the tarball is damaged."""
        try:
            key = sri.store_key(integrity)
            meta_path = self.root / "trees" / f"{key}.json"
            meta = json.loads(meta_path.read_text("utf-8"))
        except (OSError, ValueError, sri.IntegrityError):
            return None
        if isinstance(meta.get("files"), dict):
            return meta["files"]
        return self.files_from_tarball(integrity)  # not written back: readers never write

    def files_from_tarball(self, integrity: str) -> dict[str, str] | None:
        """Digests of what the stored tarball unpacks to, the tarball checked first (None when it
        is missing or does not match ``integrity``)."""
        from dshctl.bundles.npm.extract import extract

        tgz = self.root / "tarballs" / f"{sri.store_key(integrity)}.tgz"
        try:
            sri.check_file(tgz, integrity)
        except (OSError, sri.IntegrityError):
            return None
        (self.root / "tmp").mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="check-", dir=self.root / "tmp"))
        try:
            return extract(tgz, scratch / "t", what=tgz.name, limits=self.limits)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def ensure_all(self, wanted: list[Wanted], *, registry: Registry | None, offline: bool,
                   progress: Callable[[str], None] | None = None) -> dict[str, StoredTree]:
        """``integrity -> stored tree`` for every wanted package, downloading the missing ones."""
        out: dict[str, StoredTree] = {}
        missing: dict[str, Wanted] = {}
        for want in wanted:
            found = self.get(want)
            if found:
                out[want.integrity] = found
            else:
                missing.setdefault(want.integrity, want)
        if not missing:
            return out
        if offline or registry is None:
            want = next(iter(missing.values()))
            raise DshctlError(f"offline: {want.name}@{want.version} needed by {want.needed_by} "
                              f"is not in the store ({len(missing)} package(s) missing)",
                              hint="run once without --offline to download it")
        received = [0]

        def sink(n: int) -> None:
            received[0] += n

        with file_lock(self.lock_path, timeout=600, what="the package store"):
            self.clean_scratch()  # scratch only exists under the lock: a killed run's
            for sub in ("tmp", "tarballs", "trees"):  # once, not per package
                (self.root / sub).mkdir(parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(prefix="npm-", dir=self.root / "tmp"))
            try:
                # Download, check and unpack in threads (network and file creation overlap);
                # move into the store in order, in this thread (each move is a counted write).
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(max_workers=8, thread_name_prefix="tarball") as pool:
                    jobs = [(w, pool.submit(self._unpack, registry, w, scratch / str(i), sink))
                            for i, w in enumerate(missing.values())]
                    for done, (want, job) in enumerate(jobs, 1):
                        tgz, scripts, files = job.result()
                        if progress:
                            progress(f"downloaded {done}/{len(jobs)} npm packages "
                                     f"({received[0] / 1024:.0f} KiB)")
                        out[want.integrity] = self.get(want) or \
                            self._add(want, tgz, scratch / str(done - 1), scripts, files)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        return out

    def _unpack(self, registry: Registry, want: Wanted, dest: Path,
                sink) -> tuple[Path, dict, dict]:
        """Download (streamed to a file in scratch), check the integrity, extract into scratch
        ``dest``: nothing in the store, and the tarball never whole in memory."""
        what = f"{want.name}@{want.version} needed by {want.needed_by}"
        early = self._early.pop(want.integrity, None)
        try:
            tgz = early.result() if early is not None else None
        except Exception:  # noqa: BLE001 - asked again below, where a failure gets its message
            tgz = None
        try:
            if tgz is None:
                tgz = dest.with_name(dest.name + ".tgz")
                registry.tarball_to(want.resolved, tgz, sink)
            elif sink:
                sink(tgz.stat().st_size)
        except TooBig as exc:
            raise TooLarge(f"{what}: tarball {_public(want.resolved)}: {exc}",
                           hint="raise the limit with --max-package-mb if you trust this "
                                "package; nothing was installed") from None
        except FetchFailed as exc:
            raise DshctlError(f"{what}: tarball {_public(want.resolved)}: {exc}",
                              hint="try again later, or check the registry settings") from None
        try:
            sri.check_file(tgz, want.integrity)
        except (sri.IntegrityError, ValueError) as exc:
            raise DshctlError(f"{what}: {exc}", hint="the registry or a proxy serves a damaged "
                              "or altered tarball; nothing was installed") from None
        from dshctl.bundles.npm.extract import extract  # tarfile: only when there is one

        # each file's digest as it came out of the checked tarball: what `plugin verify` and
        # `plugin store verify` compare placed and stored files with
        files = extract(tgz, dest, what=what, limits=self.limits)
        return tgz, install_scripts(dest), files

    def _add(self, want: Wanted, tgz: Path, unpacked: Path, scripts: dict,
             files: dict[str, str]) -> StoredTree:
        key = self._key(want)
        self.faults.before_write(f"store tarball {want.name}")
        os.replace(tgz, self.root / "tarballs" / f"{key}.tgz")  # same filesystem: a rename
        final = self.root / "trees" / key
        if final.exists():  # an interrupted earlier run left a tree without metadata
            shutil.rmtree(final)
        self.faults.before_write(f"store tree {want.name}")
        unpacked.rename(final)
        meta = {"name": want.name, "version": want.version, "integrity": want.integrity,
                "scripts": scripts, "files": files}
        self.faults.before_write(f"store metadata {want.name}")
        write_unsynced(self.root / "trees" / f"{key}.json", (json.dumps(meta) + "\n").encode())
        return StoredTree(final, scripts, files)

    def clean_scratch(self) -> None:
        """Remove scratch left by killed runs; call under the store lock."""
        for stale in (self.root / "tmp").glob("npm-*"):
            shutil.rmtree(stale, ignore_errors=True)
        for stale in (self.root / "tmp").glob("dl-*"):  # another run's, unless it is recent
            try:
                old = time.time() - stale.stat().st_mtime > 3600
            except OSError:
                continue
            if old and stale != self._early_dir:
                shutil.rmtree(stale, ignore_errors=True)


def _public(url: str) -> str:
    """A URL without user:password, for messages and the lock."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" in parts.netloc:
        parts = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1])
    return urlunsplit(parts)


public_url = _public
