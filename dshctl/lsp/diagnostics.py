"""A document's findings, exactly as `dshctl lint FILE` reports them, as LSP diagnostics.

The text is the editor's buffer, linted as if it were the file at ``path``: its name decides the kind,
the nearest ``.dshctl-lint.yaml`` / ``pyproject.toml`` above it the levels, and its disable comments
apply (lint/pipeline.py's ``lint_text``, the function `dshctl lint -` runs). One decision of the editor
(docs/editors.md): a ``package.json`` without a ``dsh`` key gets no findings, as when `dshctl lint DIR`
walks past an ordinary npm package.
"""
from __future__ import annotations

import json
from pathlib import Path

from dshctl.core.diagnostics import Diagnostic
from dshctl.core.yaml import filekinds as fk
from dshctl.lint.plan import LintOptions, kind_of
from dshctl.lsp.positions import lines_of, to_utf16_column, token_end

SEVERITY = {"error": 1, "warning": 2, "info": 3}  # LSP DiagnosticSeverity
SOURCE = "dshctl"


def lints(path: Path) -> bool:
    """Whether `dshctl lint` knows the kind of ``path`` (by name; settings.yaml only in a dsh home)."""
    return kind_of(path) is not None


def findings(path: Path, text: str) -> list[Diagnostic]:
    """`dshctl lint`'s findings for ``text`` as the file ``path`` (empty for a kind lint does not know)."""
    from dshctl.lint.pipeline import lint_text

    kind = kind_of(path)
    if kind is None or (kind == fk.PACKAGE_JSON and not _mentions_dsh(text)):
        return []
    return lint_text(text, path, kind=kind, options=LintOptions())


def _mentions_dsh(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return True  # broken JSON: lint's parse finding is the point
    return not isinstance(value, dict) or "dsh" in value


def to_lsp(diag: Diagnostic, lines: list[str]) -> dict:
    """One finding as an LSP ``Diagnostic`` (JSON shape): lint's line:col is the range's start, the
    token there its extent; rule id as ``code``; hint and JSON path in ``data``."""
    line = max(diag.line - 1, 0)
    text = lines[line] if line < len(lines) else ""
    column = min(max(diag.column - 1, 0), len(text))
    end = token_end(text, column) if diag.line else len(text)
    start_char = to_utf16_column(text, column if diag.line else 0)
    out = {"range": {"start": {"line": line, "character": start_char},
                     "end": {"line": line, "character": to_utf16_column(text, end)}},
           "severity": SEVERITY.get(diag.severity, 1), "code": diag.rule, "source": SOURCE,
           "message": diag.message,
           "data": {"hint": diag.hint, "json_path": diag.json_path, "line": diag.line, "column": diag.column}}
    return out


def publishable(path: Path, text: str) -> list[dict]:
    lines = lines_of(text)
    return [to_lsp(d, lines) for d in findings(path, text)]
