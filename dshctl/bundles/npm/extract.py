"""Unpack an npm tarball safely into a fresh directory.

npm tarballs hold one top directory (usually ``package/``) that is stripped. Refused, with the whole
package: absolute paths, ``..``, a symbolic or hard link pointing out of the package, a member
written through a link, device files and FIFOs, and anything over the size limits. Modes are
normalised as npm does (0644, or 0755 when any execute bit is set); owners are ignored.
"""
from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path, PurePosixPath

from dshctl.bundles.git import UnsafePackage, _check_links_resolve_inside, _stays_inside
from dshctl.bundles.limits import Budget, Limits


def _relative(name: str, what: str) -> PurePosixPath | None:
    raw = PurePosixPath(name.replace("\\", "/"))
    if raw.is_absolute() or name.startswith("/") or ".." in raw.parts:
        raise UnsafePackage(f"{what}: the tarball holds a path outside the package: {name}")
    parts = [p for p in raw.parts if p not in ("", ".")]
    if len(parts) < 2:
        return None  # the top directory itself
    return PurePosixPath(*parts[1:])


def extract(data: bytes, dest: Path, *, what: str, limits: Limits) -> None:
    """Unpack ``data`` (a .tgz) into ``dest``, which must not exist; on refusal nothing remains."""
    dest.mkdir(parents=True)
    try:
        _extract(data, dest, what, limits)
        _check_links_resolve_inside(dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _extract(data: bytes, dest: Path, what: str, limits: Limits) -> None:
    budget = Budget(limits, what)
    links: set[PurePosixPath] = set()
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise UnsafePackage(f"{what}: the tarball cannot be read ({exc})") from None
    with tar:
        try:
            for member in tar:
                _one(tar, member, dest, what, budget, links)
        except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
            if isinstance(exc, UnsafePackage):
                raise
            raise UnsafePackage(f"{what}: the tarball is damaged ({exc})") from None


def _one(tar, member, dest: Path, what: str, budget: Budget, links: set) -> None:
    rel = _relative(member.name, what)
    if rel is None:
        return
    if any(PurePosixPath(*rel.parts[:i]) in links for i in range(1, len(rel.parts))):
        raise UnsafePackage(f"{what}: the tarball writes through a link: {member.name}")
    target = dest / rel
    if member.isdir():
        target.mkdir(parents=True, exist_ok=True)
        return
    if member.issym() or member.islnk():
        link = PurePosixPath(member.linkname)
        base = rel.parent if member.issym() else PurePosixPath()
        if member.islnk():
            link = _relative(member.linkname, what) or PurePosixPath(".")
        if link.is_absolute() or not _stays_inside(base, link):
            raise UnsafePackage(f"{what}: the tarball holds a link pointing outside the package: "
                                f"{member.name} -> {member.linkname}")
        if member.islnk():
            return  # npm drops hard links; so does dshctl
        target.parent.mkdir(parents=True, exist_ok=True)
        _clear(target)
        os.symlink(member.linkname, target)
        links.add(rel)
        return
    if not member.isfile():
        raise UnsafePackage(f"{what}: the tarball holds a device file, FIFO or other special "
                            f"entry: {member.name}")
    budget.add_file(rel.as_posix(), member.size)
    target.parent.mkdir(parents=True, exist_ok=True)
    _clear(target)
    src = tar.extractfile(member)
    with open(target, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
    os.chmod(target, 0o755 if member.mode & 0o111 else 0o644)


def _clear(target: Path) -> None:
    """A later member of the same path replaces the earlier one (tar semantics)."""
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
