"""Errors every layer raises, and the exit codes the CLI maps them to."""
from __future__ import annotations

# Exit codes documented in docs/cli.md.
EXIT_OK = 0
EXIT_FINDINGS = 1  # findings, or the command failed for a reason the user can fix
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class Loc:
    """A position in a source file; line and column are 1-based. Treat as immutable.

    A plain class, not a dataclass: the loader creates one per YAML node (a frozen dataclass's
    ``__init__`` is several times slower), and importing ``dataclasses`` costs ~8 ms of start-up that
    a cached ``dshctl lint`` cannot spare (docs/performance.md).
    """

    __slots__ = ("file", "line", "column")

    def __init__(self, file: str, line: int = 0, column: int = 0):
        self.file = file
        self.line = line
        self.column = column

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Loc:
            return NotImplemented
        return (self.file, self.line, self.column) == (other.file, other.line, other.column)

    def __hash__(self) -> int:
        return hash((self.file, self.line, self.column))

    def __repr__(self) -> str:
        return f"Loc(file={self.file!r}, line={self.line!r}, column={self.column!r})"

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.column}"
        return self.file


class DshctlError(Exception):
    """A failure the user can act on: one line of message, an optional location and hint."""

    exit_code = EXIT_FINDINGS

    def __init__(self, message: str, *, loc: Loc | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.loc}: {self.message}" if self.loc else self.message


class ParseError(DshctlError):
    """A file could not be read as the dialect it claims to be.

    ``js_message`` is what js-yaml (and so dsh) says about the same text, position included
    (``bad indentation of a mapping entry (2:8)``), when the failure is a YAML one."""

    def __init__(self, message: str, *, loc: Loc | None = None, hint: str | None = None,
                 js_message: str | None = None):
        super().__init__(message, loc=loc, hint=hint)
        self.js_message = js_message


class UsageError(DshctlError):
    exit_code = EXIT_USAGE
