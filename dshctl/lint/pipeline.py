"""The lint pipeline: discover -> load -> check -> diagnostics (a reporter renders them).

Like check-jsonschema, loading and checking are separate stages: a file that fails to load gets its
parse diagnostic and only the rules that do not need a value; everything else runs on loaded files.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from dshctl.core.yaml import filekinds as fk
from dshctl.core.yaml.dialect import load_json, load_yaml, read_text
from dshctl.core.diagnostics import Diagnostic
from dshctl.errors import DshctlError, Loc, ParseError
from dshctl.lint.registry import LintFile, all_rules

# Directories never worth descending into.
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__", ".hg", ".svn"})


def discover(paths: Iterable[str | Path]) -> list[tuple[Path, bool]]:
    """Files to lint with whether each was named explicitly; directories are walked for known kinds."""
    found: list[tuple[Path, bool]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
                found += [(Path(root, f), False) for f in sorted(files) if fk.kind_of(f)]
        elif p.exists():
            found.append((p, True))
        else:
            raise DshctlError("no such file or directory", loc=Loc(str(p)),
                              hint="pass files or directories that exist")
    return found


def load(path: str, text: str | None, kind: str) -> LintFile:
    """Stage 1: parse ``text`` in the dialect of ``kind`` and decide which schemas apply."""
    lf = LintFile(path=path, kind=kind, text=text)
    try:
        if text is None:
            lf.text = text = read_text(path)
        if kind == fk.PACKAGE_JSON:
            lf.document = load_json(text, path)
        else:
            lf.document = load_yaml(text, path, js=kind != fk.PRESET)
    except ParseError as err:
        lf.parse_error = err
        return lf
    if kind == fk.PACKAGE_JSON:
        lf.schemas = fk.manifest_kinds(lf.value)
    elif lf.loaded:
        lf.kind = fk.refine_kind(kind, path, lf.value)
        lf.schemas = [lf.kind]
    return lf


def check(lf: LintFile, select: Iterable[str] | None = None) -> list[Diagnostic]:
    """Stage 2: run every applicable rule."""
    wanted = set(select) if select else None
    diags: list[Diagnostic] = []
    for r in all_rules():
        if lf.kind not in r.kinds or (wanted and r.id not in wanted):
            continue
        if r.needs_value and not lf.loaded:
            continue
        diags.extend(r.run(lf))
    return diags


def lint_text(text: str, path: str | Path, *, kind: str | None = None) -> list[Diagnostic]:
    """Lint ``text`` as if it were the file ``path`` (its name decides the kind)."""
    kind = kind or fk.kind_of(path)
    if kind is None:
        raise DshctlError("not a file kind dshctl lints", loc=Loc(str(path)),
                          hint="dshctl lints cordis.yml, *.cordis.yml, cordis.patch*.yml, "
                               "*.overlay.yml, preset.yml and package.json")
    return sorted(check(load(str(path), text, kind)), key=Diagnostic.sort_key)


def lint_paths(paths: Iterable[str | Path]) -> tuple[list[Diagnostic], int]:
    """Lint files and directories; returns the diagnostics and the number of files checked."""
    diags: list[Diagnostic] = []
    count = 0
    for path, explicit in discover(paths):
        kind = fk.kind_of(path)
        if kind is None:
            diags.append(Diagnostic.at(Loc(str(path)), "file-kind", "error",
                                       "not a file kind dshctl lints",
                                       hint="name it cordis.yml, *.cordis.yml, cordis.patch.yml, "
                                            "*.overlay.yml, preset.yml or package.json"))
            continue
        lf = load(str(path), None, kind)
        if kind == fk.PACKAGE_JSON and not explicit and lf.loaded and not _mentions_dsh(lf.value):
            continue  # an ordinary npm package found while walking: not ours to lint
        count += 1
        diags.extend(check(lf))
    return sorted(diags, key=Diagnostic.sort_key), count


def _mentions_dsh(value) -> bool:
    return isinstance(value, dict) and "dsh" in value
