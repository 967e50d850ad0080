"""Errors raised by the plugin runtime, with Cordis's codes and message texts."""
from __future__ import annotations

import logging
from dataclasses import dataclass

from dshctl.core.diagnostics import Diagnostic
from dshctl.errors import DshctlError, Loc

# Every "logged, not raised" runtime error goes through this logger, exactly once.
logger = logging.getLogger("dshctl.runtime")

INACTIVE_EFFECT = "INACTIVE_EFFECT"


class CordisError(DshctlError):
    """A runtime error with an optional Cordis error ``code`` (e.g. ``INACTIVE_EFFECT``)."""

    def __init__(self, message: str, code: str | None = None, **kwargs):
        super().__init__(message, **kwargs)
        self.code = code


def inactive_effect() -> CordisError:
    return CordisError("cannot create effect on inactive context", INACTIVE_EFFECT)


@dataclass(frozen=True)
class ConfigIssue:
    """One schema violation: the validator's message and the dotted path inside the config."""

    message: str
    path: str

    def __str__(self) -> str:
        return f"{self.message} (at {self.path})"


class ValidationError(CordisError):
    """A plugin config did not match the plugin's schema."""

    def __init__(self, issues: list[ConfigIssue]):
        lines = "".join(f"\n  - {issue}" for issue in issues)
        super().__init__(f"invalid config:{lines}", "INVALID_CONFIG")
        self.issues = issues

    def diagnostics(self, loc: Loc | None = None, *, rule: str = "runtime/invalid-config",
                    file: str = "") -> list[Diagnostic]:
        """One error Diagnostic per issue, for the reporters (``loc``: where the config sits)."""
        return [Diagnostic.at(loc, rule, "error", f"invalid config: {issue}", file=file,
                              json_path="$" if issue.path == "<root>" else f"$.{issue.path}")
                for issue in self.issues]


class AggregateError(ExceptionGroup):
    """Every failure of a ``parallel`` dispatch (Cordis D aggregates rather than taking the first)."""

    def __new__(cls, message: str, errors):
        return super().__new__(cls, message, list(errors))

    def derive(self, excs):
        return AggregateError(self.message, excs)


class RuntimeTimeout(CordisError, TimeoutError):
    """A plugin hung: in ``apply``, in a disposer, or in a waterfall listener that never called next()."""

    def __init__(self, message: str):
        super().__init__(message, "TIMEOUT")
