"""Loader failures. Texts follow dsh's loader (cordis-runtime.md §6-§7); dshctl adds locations."""
from __future__ import annotations

from typing import TYPE_CHECKING

from dshctl.errors import DshctlError, Loc

if TYPE_CHECKING:  # pragma: no cover
    from .report import UpdateReport


class LoaderError(DshctlError):
    """A tree could not be mounted or updated; nothing of the attempted change is left running."""


class PluginUnavailable(LoaderError):
    """The row names a plugin with no Python implementation the host could load."""


class ConfigFileError(LoaderError):
    """An include's file could not be read, parsed or validated; the last good tree keeps running."""


class LoaderUpdateError(LoaderError):
    """A transactional update failed and was rolled back (``rollback_failed`` says if that failed too)."""

    def __init__(self, message: str, *, loc: Loc | None = None, hint: str | None = None,
                 report: "UpdateReport | None" = None, causes: list | None = None,
                 rollback_failed: bool = False):
        super().__init__(message, loc=loc, hint=hint)
        self.report = report
        self.causes = causes or []
        self.rollback_failed = rollback_failed


def cause_text(err: BaseException) -> str:
    """One line for an exception: a DshctlError as the CLI shows it (located), anything else as
    ``Type: message``; an aggregate joins its members."""
    if isinstance(err, BaseExceptionGroup):
        return "; ".join(cause_text(e) for e in err.exceptions)
    if isinstance(err, DshctlError):
        text = str(err)
    else:
        text = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
    return " ".join(text.split()) if "\n" in text else text


def duplicate_id(entry_id: str, loc: Loc | None) -> LoaderError:
    return LoaderError(f"duplicate loader entry id: {entry_id}", loc=loc,
                       hint="ids must be unique within one tree, across all of its groups")
