"""What dsh's file tools share: the session's workspace root, model paths as targets, dsh's error codes.

A tool call's root is the row's ``root`` when configured, else the calling session's ``cwd`` (its header,
as dsh's tools default to it), else the host's working directory. A model path is resolved against that
root; it is shown as dsh shows it (absolute, lexically normalised, symlinks not expanded) and refused
when its real location (symlinks followed) leaves the root — dsh reads anywhere, dshctl confines.

Errors carry dsh's ``FsError`` codes (``FS_NOT_FOUND``, ``FS_NOT_REGULAR_FILE``, ``FS_NOT_TEXT``, …) and
message texts; ``FS_OUTSIDE_WORKSPACE`` is dshctl's own.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .definition import error_result

# dsh appends the only correct recovery to these two codes at the model boundary.
REMEDIES = {"FS_STALE_VERSION": "re-read the file, then retry", "FS_NOT_OBSERVED": "read the file, then retry"}


class FsError(Exception):
    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.message, self.code = message, code


def fs_error_result(exc: FsError, *, remedy: bool = True) -> dict:
    """``remedy``: append dsh's recovery hint (its read/write/edit tools do; str_replace_editor does not)."""
    remedy = REMEDIES.get(exc.code) if remedy else None
    return error_result(f"{exc.message} — {remedy}" if remedy else exc.message, exc.code)


def argument_error(message: str) -> dict:
    """A value the schema cannot express a rule for (dsh throws a plain Error: no code of its own)."""
    return error_result(message, "TOOL_ARGUMENTS_INVALID")


@dataclass(frozen=True)
class Target:
    display: str        # what the model sees: absolute, lexically normalised
    real: Path          # where it is (symlinks followed); inside the root


def session_cwd(run: Any) -> str | None:
    session = getattr(getattr(run, "agent", None), "session", None)
    header = getattr(session, "header", None)
    cwd = header.get("cwd") if isinstance(header, dict) else None
    return cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None


def session_key(run: Any) -> str:
    """Whose observations these are: one session (dsh keys its read-before-write state by session)."""
    session = getattr(getattr(run, "agent", None), "session", None)
    header = getattr(session, "header", None)
    return str(header.get("id")) if isinstance(header, dict) and header.get("id") else "-"


class Roots:
    """The root one call works in (see the module doc)."""

    def __init__(self, fixed: Path | None):
        self.fixed = fixed

    def root(self, run: Any) -> str:
        if self.fixed is not None:
            return os.path.normpath(str(self.fixed))
        return os.path.normpath(session_cwd(run) or os.getcwd())

    def target(self, run: Any, path: str, verb: str) -> Target:
        root = self.root(run)
        if not path.strip():
            raise FsError("file_path must be a non-empty string", "FS_NOT_FOUND")
        display = os.path.normpath(os.path.join(root, os.path.expanduser(path)))
        real = Path(display).resolve()
        real_root = Path(root).resolve()
        if real != real_root and not real.is_relative_to(real_root):
            raise FsError(f'cannot {verb} "{display}": outside the workspace {root}; use a path inside it',
                          "FS_OUTSIDE_WORKSPACE")
        return Target(display, real)


def regular_file(target: Target, verb: str) -> os.stat_result:
    try:
        st = target.real.stat()
    except FileNotFoundError:
        raise FsError(f'cannot {verb} "{target.display}": not found', "FS_NOT_FOUND") from None
    except NotADirectoryError:
        raise FsError(f'cannot resolve "{target.display}": a parent path segment is not a directory',
                      "FS_NOT_FOUND") from None
    if not os.path.isfile(target.real):
        raise FsError(f'cannot {verb} "{target.display}": not a regular file', "FS_NOT_REGULAR_FILE")
    return st


def positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 1:
        raise ValueError(f"{name} must be a positive integer")
    return int(value)


def version_of(path: Path) -> tuple | None:
    """A file's observed version (dsh compares versions to refuse writes over unseen changes)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


# What each session has read, shared by every file tool of the process (read, write, edit and
# str_replace_editor obey one read-before-write rule, as dsh's one observation policy): (session id, real
# path) -> the version read, or None for "seen absent".
OBSERVED: dict[tuple[str, str], tuple | None] = {}


def check_observed(run: Any, target: Target, verb: str) -> None:
    """dsh's observation policy: overwrite or edit only what this session read, unchanged since."""
    key = (session_key(run), str(target.real))
    current = version_of(target.real)
    if OBSERVED.get(key) is None:
        if verb == "edit":
            raise FsError(f'edit requires reading "{target.display}" first', "FS_NOT_OBSERVED")
        if current is not None:
            raise FsError(f'cannot overwrite existing "{target.display}" without reading it first',
                          "FS_NOT_OBSERVED")
        return
    if current is None:
        raise FsError(f'cannot {verb} "{target.display}": file no longer exists' if verb == "write" else
                      f'cannot edit "{target.display}": file changed since it was read', "FS_STALE_VERSION")
    if current != OBSERVED[key]:
        raise FsError(f'cannot {verb} "{target.display}": file changed since it was read', "FS_STALE_VERSION")


def observe(run: Any, target: Target) -> None:
    OBSERVED[(session_key(run), str(target.real))] = version_of(target.real)
