"""The lint pipeline: discover -> load -> check -> diagnostics (a reporter renders them).

Like check-jsonschema, loading and checking are separate stages: a file that fails to load gets its
parse diagnostic and only the rules that do not need a value; everything else runs on loaded files.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

from dshctl.core.yaml import filekinds as fk
from dshctl.core.yaml.dialect import decode_text, load_json, load_yaml, read_text
from dshctl.core.yaml.filekinds import SKIP_DIRS, discover  # noqa: F401 - part of this module's API
from dshctl.core.diagnostics import Diagnostic
from dshctl.errors import DshctlError, Loc, ParseError
from dshctl.lint.registry import LintFile, all_rules

def load(path: str, text: str | None, kind: str, data: bytes | None = None) -> LintFile:
    """Stage 1: parse ``text`` (else ``data``, else the file) in the dialect of ``kind`` and decide
    which schemas apply."""
    lf = LintFile(path=path, kind=kind, text=text)
    try:
        if text is None:
            lf.text = text = read_text(path) if data is None else decode_text(data, path)
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


def lint_paths(paths: Iterable[str | Path], rule_config: Mapping[str, Any] | None = None
               ) -> tuple[list[Diagnostic], int]:
    """Lint files and directories; returns the diagnostics and the number of files checked."""
    diags: list[Diagnostic] = []
    count = 0
    for path, explicit in discover(paths):
        found, counted = lint_file(str(path), explicit, rule_config)
        diags += found
        count += counted
    return sorted(diags, key=Diagnostic.sort_key), count


def lint_file(path: str, explicit: bool, rule_config: Mapping[str, Any] | None = None,
              data: bytes | None = None) -> tuple[list[Diagnostic], bool]:
    """One file's diagnostics (from ``data`` when given: the bytes a cache key was made of) and
    whether it counts as checked. ``rule_config`` is the effective rule configuration, a
    JSON-like mapping (today ``select``: rule ids to run, or None for all); lint/cache.py makes it
    part of the cache key."""
    kind = fk.kind_of(path)
    if kind is None:
        return [Diagnostic.at(Loc(path), "file-kind", "error", "not a file kind dshctl lints",
                              hint="name it cordis.yml, *.cordis.yml, cordis.patch.yml, "
                                   "*.overlay.yml, preset.yml or package.json")], False
    lf = load(path, None, kind, data)
    if kind == fk.PACKAGE_JSON and not explicit and lf.loaded and not _mentions_dsh(lf.value):
        return [], False  # an ordinary npm package found while walking: not ours to lint
    return check(lf, (rule_config or {}).get("select")), True


def _mentions_dsh(value) -> bool:
    return isinstance(value, dict) and "dsh" in value
