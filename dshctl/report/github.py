"""GitHub Actions workflow commands: ``::error file=…,line=…,col=…,title=…::message``.

Escaping follows the runner's rules: in the message ``%``, CR and LF are percent-encoded; in property
values ``:`` and ``,`` are too.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import IO, Sequence

from dshctl.core.diagnostics import Diagnostic

_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def line(d: Diagnostic) -> str:
    props = [f"file={escape_property(d.file)}"]
    if d.line:
        props += [f"line={d.line}", f"col={d.column}"]
    props.append(f"title={escape_property(f'dshctl [{d.rule}]')}")
    message = d.message + (f"\n{d.hint}" if d.hint else "")
    return f"::{_COMMANDS.get(d.severity, 'warning')} {','.join(props)}::{escape_data(message)}"


def write(diags: Sequence[Diagnostic], stream: IO[str], *, files: int | None = None) -> None:
    for d in diags:
        stream.write(line(d) + "\n")
