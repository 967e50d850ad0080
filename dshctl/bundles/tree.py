"""Package trees on disk: a content hash that ``verify`` can recheck, and a link-safe copy."""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path


def file_digests(root: Path, skip: frozenset[str] | set[str] = frozenset(),
                 linked: list[str] | None = None) -> dict[str, str]:
    """``relative path -> digest`` for every file and link under ``root`` (links are never followed).

    ``skip`` holds relative directory paths left out (a bundle's placed npm dependencies).
    ``linked``, when given, collects the files that have other hard links (shared with the store
    by an older dshctl, so an edit would reach it).

    A file's digest is ``x:``/``f:`` (executable or not) plus the sha256 of its bytes; a link's is
    ``l:`` plus its target.
    """
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for name in dirnames + filenames:
            path = base / name
            rel = path.relative_to(root).as_posix()
            if rel in skip:
                if name in dirnames:
                    dirnames.remove(name)
                continue
            if path.is_symlink():
                out[rel] = "l:" + os.readlink(path)
                if name in dirnames:
                    dirnames.remove(name)  # os.walk would not descend, but be explicit
            elif name in filenames:
                st = path.stat()
                if linked is not None and st.st_nlink > 1:
                    linked.append(rel)
                kind = "x" if st.st_mode & 0o111 else "f"
                out[rel] = f"{kind}:{_sha256_file(path)}"
    return dict(sorted(out.items()))


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tree_hash(digests: dict[str, str]) -> str:
    """One ``sha256-…`` value for a whole tree, from its per-file digests."""
    h = hashlib.sha256()
    for rel, digest in sorted(digests.items()):
        h.update(rel.encode("utf-8") + b"\0" + digest.encode("utf-8") + b"\n")
    return "sha256-" + h.hexdigest()


def diff_digests(expected: dict[str, str], actual: dict[str, str]) -> dict[str, list[str]]:
    return {
        "modified": sorted(p for p in expected if p in actual and actual[p] != expected[p]),
        "missing": sorted(p for p in expected if p not in actual),
        "added": sorted(p for p in actual if p not in expected),
    }


def copy_tree(src: str | Path, dst: str | Path) -> None:
    """Copy a package (a git bundle or an npm package) out of the store, never by hard links: a hard
    link shares the inode, so an edit in one profile (and root ignores the store's read-only modes)
    would change the store and every other profile (docs/bundles.md, "The store"). The copy's files
    are the profile's own (``clone_file``: a reflink where the file system can). Symbolic links stay
    links, never followed. Directories get the store's mode, not its times or xattrs
    (``shutil.copytree``'s copystat per directory was a third of the placing time)."""
    os.mkdir(dst)
    with os.scandir(src) as entries:
        for entry in entries:
            target = os.path.join(dst, entry.name)
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), target)
            elif entry.is_dir():
                copy_tree(entry.path, target)
            else:
                clone_file(entry.path, target)
    os.chmod(dst, stat.S_IMODE(os.stat(src).st_mode))


_umask: list[int] = []


def umask() -> int | None:
    """The process's umask, read without changing it (``os.umask`` can only set it, which would
    race with threads creating files); None where ``/proc`` does not tell. Files created with a
    mode the umask leaves whole need no ``fchmod`` (one syscall less for each of ~900 files).
    Read once per process: dshctl never changes its umask (``safe_fs`` restores it at once)."""
    if not _umask:
        try:
            with open("/proc/self/status", "rb") as fh:
                line = next(ln for ln in fh if ln.startswith(b"Umask:"))
            _umask.append(int(line.split()[1], 8))
        except (OSError, StopIteration, ValueError, IndexError):
            _umask.append(-1)
    return None if _umask[0] < 0 else _umask[0]


def create_mode_is_exact(mode: int) -> bool:
    """True when ``os.open(..., O_CREAT, mode)`` gives exactly ``mode``."""
    mask = umask()
    return mask is not None and not mode & mask


_FICLONE = 0x40049409  # linux/fs.h: share the blocks, copy-on-write (btrfs, XFS, bcachefs, …)
_reflink_works = [True]  # set False after the first "not supported here": one failed ioctl per run


def clone_file(src: str, dst: str) -> None:
    """A copy of ``src`` at ``dst`` that shares nothing writable with it: a reflink where the file
    system has them (blocks shared until either side writes), else an in-kernel copy. The copy
    has ``src``'s permission bits and is writable by its owner even though store files are
    read-only."""
    fd_in = os.open(src, os.O_RDONLY)
    try:
        st = os.fstat(fd_in)
        mode = (st.st_mode & 0o777) | 0o200
        exact = create_mode_is_exact(mode)
        fd_out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode if exact else 0o600)
        try:
            if not _reflink(fd_in, fd_out):
                _copy_bytes(fd_in, fd_out, st.st_size)
            if not exact:
                os.fchmod(fd_out, mode)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def _reflink(fd_in: int, fd_out: int) -> bool:
    if not _reflink_works[0]:
        return False
    import fcntl

    try:
        fcntl.ioctl(fd_out, _FICLONE, fd_in)
        return True
    except OSError:  # EOPNOTSUPP/EINVAL/EXDEV/ENOTTY: this file system cannot; do not ask again
        _reflink_works[0] = False
        return False


def _copy_bytes(fd_in: int, fd_out: int, size: int) -> None:
    done = 0
    try:
        while done < size:
            n = os.copy_file_range(fd_in, fd_out, size - done)
            if n == 0:
                break
            done += n
        return
    except OSError:  # old kernels, or across file systems: read and write
        os.lseek(fd_in, done, os.SEEK_SET)
        os.lseek(fd_out, done, os.SEEK_SET)
    for block in iter(lambda: os.read(fd_in, 1 << 20), b""):
        view = memoryview(block)
        while view:
            view = view[os.write(fd_out, view):]


def make_read_only(root: Path) -> None:
    """Take the write bits off every file under ``root`` (a store tree; directories keep theirs,
    so the store can still remove a tree it no longer needs)."""
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if not os.path.islink(path) and st.st_mode & 0o222:
                os.chmod(path, st.st_mode & ~0o222 & 0o7777)


def remove_tree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
