"""npm tarballs in the content-addressed store, keyed by integrity and shared by all profiles.

    store/npm/tarballs/<algo>-<hex>.tgz   the tarball as the registry sent it (checked)
    store/npm/trees/<algo>-<hex>.json     its record, {"name", "version", "integrity", "scripts",
                                          "files"}: written last; "files" maps each path to its
                                          digest as unpacked (tree.file_digests's form)

The store keeps no unpacked copy. A package is unpacked straight into the place it is installed
(the run's staging area, then the profile), so every profile's files are its own and no edit in a
profile reaches the store or another profile. A package downloaded by this run is unpacked once,
into staging, and that tree is moved into place; one already stored is unpacked again from its
tarball and must come out exactly as its record says (``place``). ``plugin store verify``
re-checks each tarball against its integrity and its record. (The record's directory is named
``trees`` because earlier dshctl versions kept an unpacked tree beside each record; ``plugin store
prune`` removes those.)

A tarball is downloaded (in threads), checked against its integrity, unpacked and inspected (in
the calling thread, one at a time);
only a package that passed every check enters the store (under ``store.lock``), so a refused
package never reaches it. An entry counts once its record exists and its tarball matches its
integrity.
"""
from __future__ import annotations

import json
import os
import shutil
import time
import tempfile
from pathlib import Path
from typing import Callable

from dshctl.bundles.limits import Limits, TooLarge
from dshctl.bundles.npm import integrity as sri
from dshctl.bundles.npm.registry import FetchFailed, Registry, TooBig
from dshctl.bundles.npm.scripts import install_scripts
from dshctl.bundles.store import write_unsynced  # no fsync: one per package made installs I/O-bound
from dshctl.bundles.transaction import Faults
from dshctl.core.fsutil import file_lock
from dshctl.errors import DshctlError, Loc
from dshctl.records import record


@record(frozen=True)
class Wanted:
    """One package to have in the store; ``needed_by`` names it in messages."""
    name: str
    version: str
    resolved: str
    integrity: str
    needed_by: str


@record
class StoredTarball:
    """A checked tarball in the store and its record; ``fresh`` is this run's unpacking of it,
    not yet placed (the first ``place`` moves it, later ones unpack the tarball again)."""
    tarball: Path
    label: str  # name@version, for messages
    scripts: dict[str, str]
    files: dict[str, str] | None = None  # path -> digest (tree.file_digests), as unpacked
    fresh: Path | None = None


class NpmStore:
    def __init__(self, home: Path, faults: Faults | None = None, limits: Limits | None = None,
                 unpack_root: Callable[[], Path] | None = None):
        self.root = home / ".dshctl" / "store" / "npm"
        # where this run unpacks what it downloads (the transaction's staging area, on the same
        # file system as the profile, so placing is a rename); None: in the store's scratch,
        # for the digests only
        self.unpack_root = unpack_root
        self.lock_path = home / ".dshctl" / "store" / "store.lock"
        self.faults = faults or Faults()
        self.limits = limits or Limits()
        self._early: dict = {}  # integrity -> Future of a download started during resolution
        self._early_pool = None  # a ThreadPoolExecutor once a download starts
        self._early_dir: Path | None = None  # where early downloads stream to
        self._found: dict[str, StoredTarball] = {}  # integrity -> entry get() checked this run

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

    def get(self, want: Wanted) -> StoredTarball | None:
        """The stored entry, or None when it is missing or its tarball no longer matches its
        integrity (it is then downloaded again, as if it had never been stored). An entry found
        is remembered for the run: resolution asks first (to skip an early download), then
        ``ensure_all``, and each would hash the tarball again."""
        found = self._found.get(want.integrity)
        if found is not None:
            return found
        key = self._key(want)
        tgz = self.root / "tarballs" / f"{key}.tgz"
        try:
            meta = json.loads((self.root / "trees" / f"{key}.json").read_text("utf-8"))
            sri.check_file(tgz, want.integrity)
        except (OSError, ValueError, sri.IntegrityError):
            return None
        files = meta.get("files") if isinstance(meta, dict) else None
        scripts = meta.get("scripts") if isinstance(meta, dict) else None
        found = self._found[want.integrity] = StoredTarball(
            tgz, f"{want.name}@{want.version}", scripts if isinstance(scripts, dict) else {},
            files if isinstance(files, dict) else None)
        return found

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
                   progress: Callable[[str], None] | None = None) -> dict[str, StoredTarball]:
        """``integrity -> stored entry`` for every wanted package, downloading the missing ones."""
        out: dict[str, StoredTarball] = {}
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
        with file_lock(self.lock_path, timeout=600, what="the package store"):
            out.update(self._store_missing(list(missing.values()), registry, progress))
        return out

    def _store_missing(self, missing: list[Wanted], registry: Registry,
                       progress: Callable[[str], None] | None) -> dict[str, StoredTarball]:
        """Download, check, unpack and store each package; call under the store lock."""
        received = [0]

        def sink(n: int) -> None:
            received[0] += n

        self.clean_scratch()  # scratch only exists under the lock: a killed run's
        for sub in ("tmp", "tarballs", "trees"):  # once, not per package
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="npm-", dir=self.root / "tmp"))
        unpacked = Path(tempfile.mkdtemp(prefix="npm-", dir=self.unpack_root())) \
            if self.unpack_root else scratch
        out: dict[str, StoredTarball] = {}
        pool = None
        try:
            # Download in threads (the network overlaps, with the resolution's early downloads
            # too); check, unpack and enter the store here, one package at a time, in order:
            # unpacking is CPU and file creation, and eight threads contending for the
            # interpreter cost more system time than they saved (docs/performance.md)
            if any(want.integrity not in self._early for want in missing):
                from concurrent.futures import ThreadPoolExecutor

                pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="tarball")
            jobs = self._start_downloads(missing, registry, scratch, sink, pool)
            for done, (want, job, early, tgz) in enumerate(jobs, 1):
                tgz = self._downloaded(registry, want, job, early, tgz, sink)
                scripts, files = self._unpack(want, tgz, unpacked / str(done - 1))
                if progress:
                    progress(f"downloaded {done}/{len(jobs)} npm packages "
                             f"({received[0] / 1024:.0f} KiB)")
                entry = self.get(want) or self._add(want, tgz, scripts, files)
                if unpacked is not scratch:
                    entry.fresh = unpacked / str(done - 1)
                out[want.integrity] = entry
        finally:
            if pool is not None:  # a refused package: the other downloads are not needed
                pool.shutdown(wait=True, cancel_futures=True)
            shutil.rmtree(scratch, ignore_errors=True)
        return out

    def _start_downloads(self, missing: list[Wanted], registry: Registry, scratch: Path, sink,
                         pool) -> list[tuple]:
        """``(want, job, early, tgz)`` for each package: the resolution's early download of it,
        or one started now in ``pool``."""
        jobs = []
        for i, want in enumerate(missing):
            tgz = scratch / f"{i}.tgz"
            job = self._early.pop(want.integrity, None)
            early = job is not None
            if job is None:
                job = pool.submit(self._download, registry, want, tgz, sink)
            jobs.append((want, job, early, tgz))
        return jobs

    def _downloaded(self, registry: Registry, want: Wanted, job, early: bool, tgz: Path,
                    sink) -> Path:
        """The downloaded tarball of ``job``. An early download that failed is asked again
        here, where a failure gets its message (the job of one started here already has it)."""
        if not early:
            return job.result()
        try:
            got = job.result()
        except Exception:  # noqa: BLE001 - asked again below
            return self._download(registry, want, tgz, sink)
        if sink:
            sink(got.stat().st_size)
        return got

    def _download(self, registry: Registry, want: Wanted, tgz: Path, sink) -> Path:
        """Stream the tarball to ``tgz`` in scratch: nothing in the store, and the tarball never
        whole in memory."""
        what = f"{want.name}@{want.version} needed by {want.needed_by}"
        try:
            registry.tarball_to(want.resolved, tgz, sink)
        except TooBig as exc:
            raise TooLarge(f"{what}: tarball {_public(want.resolved)}: {exc}",
                           hint="raise the limit with --max-package-mb if you trust this "
                                "package; nothing was installed") from None
        except FetchFailed as exc:
            raise DshctlError(f"{what}: tarball {_public(want.resolved)}: {exc}",
                              hint="try again later, or check the registry settings") from None
        return tgz

    def _unpack(self, want: Wanted, tgz: Path, dest: Path) -> tuple[dict, dict]:
        """Check the downloaded tarball against its integrity and unpack it into ``dest``."""
        what = f"{want.name}@{want.version} needed by {want.needed_by}"
        try:
            sri.check_file(tgz, want.integrity)
        except (sri.IntegrityError, ValueError) as exc:
            raise DshctlError(f"{what}: {exc}", hint="the registry or a proxy serves a damaged "
                              "or altered tarball; nothing was installed") from None
        from dshctl.bundles.npm.extract import extract  # tarfile: only when there is one

        # each file's digest as it came out of the checked tarball: what placing, `plugin
        # verify` and `plugin store verify` compare files with
        files = extract(tgz, dest, what=what, limits=self.limits)
        return install_scripts(dest), files

    def _add(self, want: Wanted, tgz: Path, scripts: dict, files: dict[str, str]) -> StoredTarball:
        key = self._key(want)
        stored = self.root / "tarballs" / f"{key}.tgz"
        self.faults.before_write(f"store tarball {want.name}")
        os.replace(tgz, stored)  # same filesystem: a rename
        meta = {"name": want.name, "version": want.version, "integrity": want.integrity,
                "scripts": scripts, "files": files}
        self.faults.before_write(f"store metadata {want.name}")
        write_unsynced(self.root / "trees" / f"{key}.json", (json.dumps(meta) + "\n").encode())
        return StoredTarball(stored, f"{want.name}@{want.version}", scripts, files)

    def place(self, entry: StoredTarball, dest: Path) -> None:
        """Put the package's files at ``dest`` (which must not exist): this run's unpacking of it
        moved there, or else its stored tarball unpacked again, which must give exactly the
        files its record names (an edited record or tarball is refused, not installed)."""
        fresh, entry.fresh = entry.fresh, None
        if fresh is not None:
            try:
                os.rename(fresh, dest)
                return
            except OSError:  # another file system after all: unpack it there
                shutil.rmtree(fresh, ignore_errors=True)
        from dshctl.bundles.npm.extract import extract

        files = extract(entry.tarball, dest, what=entry.label, limits=self.limits)
        if entry.files is not None and files != entry.files:
            shutil.rmtree(dest, ignore_errors=True)
            record = entry.tarball.parent.parent / "trees" / f"{entry.tarball.stem}.json"
            raise DshctlError(f"{entry.label}: the store's tarball {entry.tarball.name} does not "
                              f"unpack to the files its record names", loc=Loc(str(record)),
                              hint="run `dshctl plugin store verify --repair`, then this command "
                                   "again; nothing was installed")

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
