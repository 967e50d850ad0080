"""The one finding type every checker produces and every reporter renders."""
from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import Any

from dshctl.errors import DshctlError, Loc

SEVERITIES = ("error", "warning", "info")


_FIELDS = ("file", "line", "column", "rule", "severity", "message", "hint", "json_path")


class Diagnostic:
    """One finding at ``file:line:column``. Immutable; a plain class rather than a frozen dataclass
    because a cached ``dshctl lint`` must not pay for importing ``dataclasses`` (start-up time)."""

    __slots__ = _FIELDS

    def __init__(self, file: str, line: int, column: int, rule: str, severity: str, message: str,
                 hint: str | None = None, json_path: str = "$"):
        put = object.__setattr__
        put(self, "file", file)
        put(self, "line", line)
        put(self, "column", column)
        put(self, "rule", rule)
        put(self, "severity", severity)
        put(self, "message", message)
        put(self, "hint", hint)
        put(self, "json_path", json_path)

    def _values(self) -> tuple:
        return (self.file, self.line, self.column, self.rule, self.severity, self.message, self.hint,
                self.json_path)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Diagnostic is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Diagnostic:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return "Diagnostic(" + ", ".join(f"{n}={v!r}" for n, v in zip(_FIELDS, self._values())) + ")"

    def __reduce__(self):  # pickled to and from lint's worker processes
        return (Diagnostic, self._values())

    def replace(self, **changes: Any) -> "Diagnostic":
        """A copy with ``changes`` applied (what ``dataclasses.replace`` did)."""
        return Diagnostic(**{**self.to_dict(), **changes})

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
        return dict(zip(_FIELDS, self._values()))

    def sort_key(self) -> tuple:
        return (self.file, self.line, self.column, self.rule)


def has_errors(diags: list[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diags)
