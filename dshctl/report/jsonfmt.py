"""JSON: a versioned envelope ``{"version": 1, "summary": {…}, "findings": [{…}, …]}``.

Its JSON Schema is ``schemas/lint-report.schema.json`` (docs/cli.md, "JSON output"). ``version`` grows
only when a field changes meaning or goes away; new fields may appear within a version.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import IO, Sequence

from dshctl.core.diagnostics import SEVERITIES, Diagnostic
from dshctl.core.yaml.jsvalue import json_dumps

VERSION = 1


def envelope(diags: Sequence[Diagnostic], files: int | None = None) -> dict:
    summary: dict = {"files": files} if files is not None else {}
    summary.update({f"{s}s": sum(d.severity == s for d in diags) for s in SEVERITIES})
    return {"version": VERSION, "summary": summary, "findings": [d.to_dict() for d in diags]}


def write(diags: Sequence[Diagnostic], stream: IO[str], *, files: int | None = None) -> None:
    stream.write(json_dumps(envelope(diags, files), indent=2) + "\n")
