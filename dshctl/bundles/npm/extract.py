"""Unpack an npm tarball safely into a fresh directory.

npm tarballs hold one top directory (usually ``package/``) that is stripped. Refused, with the whole
package: absolute paths, ``..``, a symbolic or hard link pointing out of the package, a member
written through a link, device files and FIFOs, and anything over the size limits. Modes are
normalised as npm does (0644, or 0755 when any execute bit is set); owners are ignored. The files
are the profile's own: a package is unpacked straight into the place it is installed (store.py).

``extract`` returns each unpacked file's digest (``tree.file_digests``'s form), taken from the
bytes it writes: the store records them, placing compares them with that record, and reading
back ~460 files just written cost a cold add ~10 % of its CPU.
"""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import zlib
from pathlib import Path, PurePosixPath

from dshctl.bundles.git import UnsafePackage, _check_links_resolve_inside, _stays_inside
from dshctl.bundles.limits import Budget, Limits
from dshctl.bundles.tree import create_mode_is_exact


def _relative(name: str, what: str) -> str | None:
    """The member's path without the top directory (``a/b``), or None for the top itself."""
    raw = name.replace("\\", "/")
    if raw.startswith("/"):
        raise UnsafePackage(f"{what}: the tarball holds a path outside the package: {name}")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafePackage(f"{what}: the tarball holds a path outside the package: {name}")
    return "/".join(parts[1:]) if len(parts) >= 2 else None


def extract(data: bytes | Path, dest: Path, *, what: str, limits: Limits) -> dict[str, str]:
    """Unpack ``data`` (a .tgz, or the path of one) into ``dest``, which must not exist; on refusal
    nothing remains. Returns ``relative path -> digest`` of what it wrote, equal to
    ``tree.file_digests(dest)``."""
    dest.mkdir(parents=True)
    digests: dict[str, str] = {}
    try:
        if _extract(data, dest, what, limits, digests):
            _check_links_resolve_inside(dest)  # only links can lead out of the tree
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return dict(sorted(digests.items()))


def _open(data: bytes | Path, limits: Limits) -> tarfile.TarFile:
    """A gzip tarball is inflated in one call (much cheaper than tarfile's gzip stream), but never
    past what the limits allow plus tar's headers: a bigger one (a bomb) is streamed instead,
    so the limits refuse it member by member, as for any other compression. A tarball on disk is
    mapped, not read into memory."""
    if isinstance(data, Path):
        return _open_file(data, limits)
    return _inflated(data, limits) or tarfile.open(fileobj=io.BytesIO(data), mode="r:*")


def _inflated(data, limits: Limits) -> tarfile.TarFile | None:
    """The whole gzip tarball ``data`` (bytes or a mapped file) inflated in memory when it fits the
    limits, else None (not gzip, too big, or damaged: tarfile's own reading then decides)."""
    if data[:2] != b"\x1f\x8b":
        return None
    cap = limits.total_bytes + 1536 * (limits.files + 4)
    inflate = zlib.decompressobj(wbits=31)
    try:
        raw = inflate.decompress(data, cap)
    except zlib.error:
        return None  # tarfile's own reading names the damage
    if inflate.eof and not inflate.unused_data:
        return tarfile.open(fileobj=io.BytesIO(raw), mode="r:")
    return None


def _open_file(path: Path, limits: Limits) -> tarfile.TarFile:
    import mmap

    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            raise tarfile.ReadError("empty file")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as view:
            opened = _inflated(view, limits)
            if opened is not None:
                return opened
    return tarfile.open(name=str(path), mode="r:*")


def _extract(data: bytes | Path, dest: Path, what: str, limits: Limits, digests: dict) -> bool:
    """True when the package holds symbolic links."""
    budget = Budget(limits, what)
    links: set[str] = set()
    made = {""}  # directories (relative) known to exist
    state = (budget, links, made, digests)
    try:
        tar = _open(data, limits)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise UnsafePackage(f"{what}: the tarball cannot be read ({exc})") from None
    with tar:
        try:
            for member in tar:
                _one(tar, member, str(dest), what, state)
        except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
            if isinstance(exc, UnsafePackage):
                raise
            raise UnsafePackage(f"{what}: the tarball is damaged ({exc})") from None
    return bool(links)


def _one(tar, member, dest: str, what: str, state: tuple) -> None:
    budget, links, made, digests = state
    rel = _relative(member.name, what)
    if rel is None:
        return
    if links and any(rel.startswith(link + "/") for link in links):
        raise UnsafePackage(f"{what}: the tarball writes through a link: {member.name}")
    target = os.path.join(dest, rel)
    if member.isdir():
        _dirs(dest, rel, made)
        return
    parent = rel.rpartition("/")[0]
    if member.issym() or member.islnk():
        link = PurePosixPath(member.linkname)
        base = PurePosixPath(parent) if member.issym() else PurePosixPath()
        if member.islnk():
            link = PurePosixPath(_relative(member.linkname, what) or ".")
        if link.is_absolute() or not _stays_inside(base, link):
            raise UnsafePackage(f"{what}: the tarball holds a link pointing outside the package: "
                                f"{member.name} -> {member.linkname}")
        if member.islnk():
            return  # npm drops hard links; so does dshctl
        _dirs(dest, parent, made)
        _clear(Path(target), made, rel, digests)
        os.symlink(member.linkname, target)
        links.add(rel)
        digests[rel] = "l:" + member.linkname
        return
    if not member.isfile():
        raise UnsafePackage(f"{what}: the tarball holds a device file, FIFO or other special "
                            f"entry: {member.name}")
    budget.add_file(rel, member.size)
    _dirs(dest, parent, made)
    body = tar.extractfile(member).read()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    mode = 0o755 if member.mode & 0o111 else 0o644
    exact = create_mode_is_exact(mode)  # then created so, no fchmod
    try:
        fd = os.open(target, flags, mode if exact else 0o644)
    except FileExistsError:  # a later member of the same path replaces the earlier one
        _clear(Path(target), made, rel, digests)
        fd = os.open(target, flags, mode if exact else 0o644)
    try:
        view = memoryview(body)
        while view:
            view = view[os.write(fd, view):]
        if not exact:
            os.fchmod(fd, mode)
    finally:
        os.close(fd)
    digests[rel] = ("x:" if member.mode & 0o111 else "f:") + hashlib.sha256(body).hexdigest()


def _dirs(dest: str, rel: str, made: set) -> None:
    if rel not in made:
        os.makedirs(os.path.join(dest, rel), exist_ok=True)
        while rel and rel not in made:
            made.add(rel)
            rel = rel.rpartition("/")[0]


def _clear(target: Path, made: set, rel: str, digests: dict) -> None:
    """A later member of the same path replaces the earlier one (tar semantics)."""
    digests.pop(rel, None)
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
        made.difference_update({d for d in made if d == rel or d.startswith(rel + "/")})
        for gone in [d for d in digests if d.startswith(rel + "/")]:
            del digests[gone]
