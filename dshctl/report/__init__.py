"""Reporters: render diagnostics by name (text, json, sarif, github; auto picks one).

``render(diags, fmt, stream)`` is the only entry point commands use; each format is one module.
May import ``core``, ``dshctl.lint`` (rule metadata for SARIF) and ``dshctl.errors``; imported only
by the CLI.
"""
from __future__ import annotations

import importlib
import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import IO, Iterable

from dshctl.core.diagnostics import Diagnostic

FORMATS = ("auto", "text", "json", "sarif", "github")
_MODULES = {"text": "text", "json": "jsonfmt", "sarif": "sarif", "github": "github"}


def resolve_format(fmt: str) -> str:
    """``auto`` is GitHub annotations under GitHub Actions, else text."""
    if fmt == "auto":
        return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    if fmt not in _MODULES:
        from dshctl.errors import UsageError

        raise UsageError(f"unknown format {fmt!r}", hint="choose one of: " + ", ".join(FORMATS))
    return fmt


def render(diags: Iterable[Diagnostic], fmt: str = "auto", stream: IO[str] | None = None, *,
           files: int | None = None) -> None:
    """Write ``diags`` in ``fmt``; ``files`` (how many files were checked) goes into summaries."""
    stream = stream or sys.stdout
    ordered = sorted(diags, key=Diagnostic.sort_key)
    module = importlib.import_module(f"dshctl.report.{_MODULES[resolve_format(fmt)]}")
    module.write(ordered, stream, files=files)
