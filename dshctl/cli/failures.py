"""How the CLI turns what goes wrong outside dshctl into one clear line: undecodable arguments, text
the terminal cannot encode, and errors the file system raises."""
from __future__ import annotations

import errno
import sys

from dshctl.errors import DshctlError, Loc, UsageError


def never_unencodable() -> None:
    """Text that UTF-8 cannot encode (a lone surrogate, a valid JavaScript string) is printed as a
    ``\\uXXXX`` escape instead of ending the command with UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def check_argv(args: list[str]) -> None:
    """Arguments must be UTF-8: Python hands undecodable bytes (``$'\\xff'``) over as lone
    surrogates, which would end up in files no reader accepts."""
    for n, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            shown = arg.encode("utf-8", "backslashreplace").decode("ascii")
            raise UsageError(f"argument {n} ({shown!r}) is not valid UTF-8 (at character {exc.start + 1})",
                             hint="pass text and paths in UTF-8") from None


_OS_HINTS = {errno.ENAMETOOLONG: "a file or profile name is limited to 255 bytes (and a path to 4,096)",
             errno.ENOTDIR: "a part of the path is a file, not a directory (check --home)",
             errno.ELOOP: "the path goes through a symbolic link loop",
             errno.EACCES: "check the permissions", errno.EPERM: "check the permissions",
             errno.EROFS: "the file system is read-only", errno.ENOSPC: "free some disk space"}


def os_error(exc: OSError) -> DshctlError:
    """An OSError the file system raised, as one line naming the path."""
    where = exc.filename if exc.filename is not None else None
    reason = exc.strerror or str(exc)
    return DshctlError(reason.lower() if reason[:1].isupper() else reason,
                       loc=Loc(str(where)) if where is not None else None,
                       hint=_OS_HINTS.get(exc.errno, "check the path and try again"))
