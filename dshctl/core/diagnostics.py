"""The one finding type every checker produces and every reporter renders."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from dshctl.errors import DshctlError, Loc

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    column: int
    rule: str
    severity: str
    message: str
    hint: str | None = None
    json_path: str = "$"

    @property
    def loc(self) -> Loc:
        return Loc(self.file, self.line, self.column)

    @classmethod
    def at(cls, loc: Loc | None, rule: str, severity: str, message: str, *,
           hint: str | None = None, json_path: str = "$", file: str = "") -> "Diagnostic":
        loc = loc or Loc(file)
        return cls(loc.file, loc.line, loc.column, rule, severity, message, hint, json_path)

    @classmethod
    def from_error(cls, err: DshctlError, rule: str, *, file: str = "") -> "Diagnostic":
        return cls.at(err.loc, rule, "error", err.message, hint=err.hint, file=file)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sort_key(self) -> tuple:
        return (self.file, self.line, self.column, self.rule)


def has_errors(diags: list[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diags)
