"""Copy-only preset authoring, as dsh's ``copy()`` does it (dsh-config.md §7).

The copy dereferences symlinks, re-tightens permissions to 0600 files / 0700 directories and
rewrites ``preset.yml`` keeping only ``description``. It is built in a temp directory beside the
target and renamed into place under a lock, so the target is either absent or complete.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from dshctl.core.yaml.emit import dump_metadata
from dshctl.core.fsutil import atomic_write, file_lock
from dshctl.errors import DshctlError, Loc, UsageError

from .model import METADATA_FILE, Preset, is_preset_id

FILE_MODE = 0o600
DIR_MODE = 0o700
LOCK_PATH = (".dshctl", "locks", "presets.lock")  # under .dshctl/, which discovery never takes for a preset


def copy_preset(source: Preset, new_id: str, into: Path) -> Path:
    """Copy ``source`` to ``into/new_id``; refuse an invalid id or an existing target."""
    if not is_preset_id(new_id):
        raise UsageError(f"{new_id!r} is not a valid preset id",
                         hint="use lowercase letters, digits and '-', starting with a letter or digit")
    into = Path(into)
    target = into / new_id
    _make_root(into)
    with file_lock(into.joinpath(*LOCK_PATH), what=f"the preset root {into}"):
        _refuse_existing(target)
        staging = Path(tempfile.mkdtemp(prefix=f".{new_id}.", suffix=".tmp", dir=into))
        try:
            _copy_tree(source.dir, staging)
            _rewrite_metadata(staging / METADATA_FILE, source.metadata.description)
            _tighten(staging)
            os.rename(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return target


def _make_root(into: Path) -> None:
    try:
        into.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    except OSError as exc:  # a file in the way, no permission, …
        raise DshctlError(f"cannot create the preset root: {exc.strerror or exc}", loc=Loc(str(into)),
                          hint="pass --into a directory (it is created if missing), not a file") from None


def _refuse_existing(target: Path) -> None:
    if os.path.lexists(target):
        raise DshctlError(f"{target} already exists; refusing to overwrite it", loc=Loc(str(target)),
                          hint="pick another id, or delete the existing preset first")


def _copy_tree(src: Path, dst: Path) -> None:
    try:
        shutil.copytree(src, dst, symlinks=False, dirs_exist_ok=True)
    except shutil.Error as exc:
        first = exc.args[0][0] if exc.args and exc.args[0] else ("?", "?", str(exc))
        raise DshctlError(f"cannot copy {first[0]}: {first[2]}", loc=Loc(str(first[0])),
                          hint="fix or remove that file (a dangling or looping symlink?) and retry") from None
    except OSError as exc:
        raise DshctlError(f"cannot copy the preset: {exc.strerror or exc}", loc=Loc(str(exc.filename or src)),
                          hint="check that the source preset is readable") from None


def _rewrite_metadata(path: Path, description: str | None) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    if description is not None:
        atomic_write(path, dump_metadata({"description": description}), mode=FILE_MODE)


def _tighten(top: Path) -> None:
    os.chmod(top, DIR_MODE)
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), DIR_MODE)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), FILE_MODE)
