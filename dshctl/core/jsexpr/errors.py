"""The two failures of the ``!!js`` subset and the row-level texts of cordis-runtime.md §12.5."""
from __future__ import annotations

import re

from dshctl.errors import DshctlError, Loc

_LINE_BREAKS = re.compile(r"\s*[\r\n]\s*")
DOC_HINT = "dshctl evaluates only the !!js subset described in docs/jsexpr.md"


class JsSyntaxError(DshctlError):
    """The expression is malformed or outside the subset. ``column`` is 1-based within the expression;
    ``reason`` is the bare explanation (``message`` may be the row-level text built from it)."""

    def __init__(self, reason: str, column: int, *, message: str | None = None,
                 loc: Loc | None = None, hint: str | None = None):
        super().__init__(message or f"{reason} (column {column})", loc=loc, hint=hint)
        self.reason = reason
        self.column = column


class JsEvalError(DshctlError):
    """The expression parsed but could not be evaluated (e.g. reading a property of undefined).
    ``reason`` is the bare explanation; ``path`` is set once the error is tied to a config position."""

    def __init__(self, reason: str, *, message: str | None = None, loc: Loc | None = None,
                 hint: str | None = None, path: str | None = None):
        super().__init__(message or reason, loc=loc, hint=hint)
        self.reason = reason
        self.path = path


def unsupported_message(full_id: str, name: str, path: str, expr: str) -> str:
    # A block-scalar expression spans lines; the message stays on one line.
    one_line = _LINE_BREAKS.sub(" ", expr.strip())
    return f'unsupported !!js expression in row "{full_id}" ({name}) at {path}: {one_line}'


def eval_failed_message(full_id: str, name: str, path: str, reason: str) -> str:
    return f'!!js evaluation failed in row "{full_id}" ({name}) at {path}: {reason}'
