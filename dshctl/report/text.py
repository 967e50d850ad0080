"""Plain text: ``file:line:col: severity [rule] message`` and an indented hint line."""
from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import IO, Sequence

from dshctl.core.diagnostics import Diagnostic


def location(d: Diagnostic) -> str:
    if d.line:
        return f"{d.file}:{d.line}:{d.column}"
    return d.file


def write(diags: Sequence[Diagnostic], stream: IO[str], *, files: int | None = None) -> None:
    for d in diags:
        stream.write(f"{location(d)}: {d.severity} [{d.rule}] {d.message}\n")
        if d.hint:
            stream.write(f"  hint: {d.hint}\n")
