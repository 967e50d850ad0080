"""The content-addressed package store under ``$DSH_HOME/.dshctl/store/``, shared by all profiles.

Layout (docs/bundles.md)::

    store/
      packages/<commit>/        the clean tree of that commit (no .git), written once
      packages/<commit>.json    {"url", "commit", "integrity", "files": {path: digest}, "shallow"}
      refs.json                 {"<url>#<ref>": {"commit": …}}: what each (source, ref) resolved to
      tmp/                      scratch space for fetches (same filesystem, so commits are renames)
      store.lock                serializes writers

A tree appears under ``packages/`` only complete (rename of a finished temp dir), and its metadata
file is written after it, so a tree without metadata is an interrupted fetch and is redone.
Store writes are temp file + rename without fsync (``write_unsynced``): a kill leaves the old file
or the new one; the trees themselves are never fsynced, so an fsync of their metadata or of
``refs.json`` would promise nothing after a power loss (a lost or torn entry is re-fetched or
re-resolved). The profile's own writes stay fsynced by the transaction.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from dshctl.bundles import git as gitmod
from dshctl.bundles.specs import GitSpec, is_commit
from dshctl.bundles.transaction import Faults
from dshctl.bundles.tree import file_digests, make_read_only, tree_hash
from dshctl.core.fsutil import file_lock
from dshctl.errors import DshctlError
from dshctl.records import record

Progress = Callable[[str], None]


def write_unsynced(path: Path, data: bytes) -> None:
    """Temp file + rename: a killed run leaves the old state or the new one, never a torn file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@record(frozen=True)
class StoredPackage:
    commit: str
    path: Path
    integrity: str
    files: dict[str, str]
    shallow: bool | None
    checked_by: str | None = None  # the dshctl version whose package check let the tree in


class Store:
    def __init__(self, home: Path, faults: Faults | None = None):
        self.root = home / ".dshctl" / "store"
        self.packages = self.root / "packages"
        self.faults = faults or Faults()
        self._git: gitmod.Git | None = None

    # -- remembered resolutions ---------------------------------------------------------------

    def _refs(self) -> dict:
        try:
            return json.loads((self.root / "refs.json").read_text("utf-8"))
        except (FileNotFoundError, ValueError):
            return {}

    def remembered(self, spec: GitSpec) -> str | None:
        entry = self._refs().get(spec.source_key)
        return entry.get("commit") if isinstance(entry, dict) else None

    def remember(self, spec: GitSpec, commit: str) -> None:
        with file_lock(self.root / "store.lock", what="the package store"):
            refs = self._refs()
            if refs.get(spec.source_key, {}).get("commit") == commit:
                return
            refs[spec.source_key] = {"commit": commit}
            self.faults.before_write("store refs.json")
            write_unsynced(self.root / "refs.json",
                           (json.dumps(refs, indent=2, sort_keys=True) + "\n").encode())

    # -- resolution and fetch -----------------------------------------------------------------

    @property
    def git(self) -> gitmod.Git:
        if self._git is None:  # git's HOME: a path in the store that is never made, not a
            # directory in $TMPDIR, which a kill would leave behind
            self._git = gitmod.Git(self.root / "git-home")
        return self._git

    def resolve(self, spec: GitSpec, *, offline: bool, refresh: bool,
                fetch_head: bool = False) -> str | None:
        """The commit for ``spec``: pinned, else remembered and stored (no network), else ls-remote.

        ``refresh`` (update) asks the remote even when a resolution is remembered. With
        ``fetch_head``, a spec of the remote's HEAD that still needs the network resolves to None:
        ``ensure`` fetches HEAD and learns the commit from it, one git run and one connection fewer
        than listing the refs first (an update keeps ``ls-remote``: nothing is fetched when HEAD
        has not moved).
        """
        if is_commit(spec.ref):
            return spec.ref
        known = self.remembered(spec)
        if known and (offline or (not refresh and self.get(known) is not None)):
            return known
        if offline:
            raise DshctlError(f"offline: no remembered commit for {spec.source_key}",
                              hint="run once without --offline, or pin the spec to a commit "
                                   "that is already in the store")
        if fetch_head and spec.ref is None and not refresh:
            return None
        return gitmod.resolve_ref(self.git, spec)

    def get(self, commit: str) -> StoredPackage | None:
        meta_path = self.packages / f"{commit}.json"
        tree = self.packages / commit
        try:
            meta = json.loads(meta_path.read_text("utf-8"))
        except (FileNotFoundError, ValueError):
            return None
        if not tree.is_dir():
            return None
        return StoredPackage(commit, tree, meta["integrity"], meta["files"], meta.get("shallow"),
                             meta.get("checkedBy"))

    def ensure(self, spec: GitSpec, commit: str | None, *, offline: bool,
               progress: Progress | None = None,
               check: Callable[[Path], object] | None = None) -> StoredPackage:
        """The stored tree of ``commit``, fetching it once (under the store lock) when missing;
        ``commit`` None (``resolve(fetch_head=True)``) fetches the remote's HEAD.

        ``check`` inspects the fetched tree in scratch space before it enters the store (size
        limits, package rules): a refused package never reaches the store."""
        if commit is None:
            with file_lock(self.root / "store.lock", timeout=600, what="the package store"):
                if progress:
                    progress(f"fetching {spec.url}")
                self._clear_stale_fetches()
                return self._fetch(spec.url, None, check, progress)
        stored = self.get(commit)
        if stored:
            return stored
        if offline:
            raise DshctlError(f"offline: commit {commit[:12]} of {spec.url} is not in the store",
                              hint="run once without --offline to fetch it")
        with file_lock(self.root / "store.lock", timeout=600, what="the package store"):
            stored = self.get(commit)  # another process may have fetched it meanwhile
            if stored:
                return stored
            if progress:
                progress(f"fetching {spec.url} @ {commit[:12]}")
            self._clear_stale_fetches()
            return self._fetch(spec.url, commit, check, progress)

    def _clear_stale_fetches(self) -> None:
        # Fetches only run under the store lock, so any scratch left here is a killed run's.
        for stale in (self.root / "tmp").glob("fetch-*"):
            shutil.rmtree(stale, ignore_errors=True)

    def _fetch(self, url: str, commit: str | None, check: Callable[[Path], None] | None = None,
               progress: Progress | None = None) -> StoredPackage:
        (self.root / "tmp").mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="fetch-", dir=self.root / "tmp"))
        try:
            repo = scratch / "repo.git"
            if commit is None:   # the remote's HEAD: its commit is what the fetch brought
                commit, shallow = gitmod.fetch_head(self.git, url, repo, progress)
                stored = self.get(commit)
                if stored:       # another spec stored this commit already
                    return stored
            else:
                shallow = gitmod.fetch_commit(self.git, url, commit, repo, progress)
            try:
                gitmod.export_tree(self.git, repo, commit, scratch / "tree")
            except gitmod.GitError:
                gitmod.check_commit(self.git, url, commit, repo)  # the object is not a commit
                raise
            files = file_digests(scratch / "tree")
            make_read_only(scratch / "tree")  # profiles get copies (tree.copy_tree)
            verdict = check(scratch / "tree") if check else None
            self.packages.mkdir(parents=True, exist_ok=True)
            final = self.packages / commit
            if final.exists():  # an interrupted earlier fetch left a tree without metadata
                shutil.rmtree(final)
            self.faults.before_write(f"store tree {commit[:12]}")
            (scratch / "tree").rename(final)
            meta = {"url": url, "commit": commit, "integrity": tree_hash(files), "files": files,
                    "shallow": shallow}
            if isinstance(getattr(verdict, "patch", None), str):  # a bundle whose patch parsed
                from dshctl import __version__

                meta["checkedBy"] = __version__
            self.faults.before_write(f"store metadata {commit[:12]}")
            write_unsynced(self.packages / f"{commit}.json", (json.dumps(meta, indent=1) + "\n").encode())
            return StoredPackage(commit, final, meta["integrity"], files, shallow,
                                 meta.get("checkedBy"))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
            with contextlib.suppress(OSError):   # tmp/ only holds fetches: once empty it goes, so a
                (self.root / "tmp").rmdir()      # failed fetch in a new home lets the lock undo it
