"""Recognise a dsh configuration file's kind from its name (and, for package.json, its content)."""
from __future__ import annotations

import os
from pathlib import Path, PurePath

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import Any, Iterable

from dshctl.errors import DshctlError, Loc

# Kind names double as schema names (see core/schemas.SCHEMAS).
ENTRY_LIST = "entry-list"
PATCH_LIST = "cordis.patch"
PRESET = "preset"
PACKAGE_JSON = "package.json"  # profile and/or bundle manifest: decided by content
PROFILE_MANIFEST = "profile-manifest"
BUNDLE_MANIFEST = "bundle-manifest"
SETTINGS = "settings"  # $DSH_HOME/settings.yaml: recognised by where it is, not by name alone
SETTINGS_NAMES = ("settings.yaml", "settings.yml", "settings.json")

# Order matters: the first matching pattern wins (cordis.patch.yml before *.cordis.yml).
_NAME_PATTERNS: list[tuple[str, str]] = [
    ("cordis.patch.yml", PATCH_LIST),
    ("cordis.patch.yaml", PATCH_LIST),
    ("cordis.patch.*.yml", PATCH_LIST),
    ("cordis.patch.*.yaml", PATCH_LIST),
    ("*.cordis.patch.yml", PATCH_LIST),  # a named patch file, e.g. work.cordis.patch.yml
    ("*.cordis.patch.yaml", PATCH_LIST),
    ("*.overlay.yml", PATCH_LIST),
    ("*.overlay.yaml", PATCH_LIST),
    ("cordis.yml", ENTRY_LIST),
    ("cordis.yaml", ENTRY_LIST),
    ("*.cordis.yml", ENTRY_LIST),  # includes agent.cordis.yml
    ("*.cordis.yaml", ENTRY_LIST),
    ("preset.yml", PRESET),
    ("preset.yaml", PRESET),
    ("package.json", PACKAGE_JSON),
]

YAML_KINDS = frozenset({ENTRY_LIST, PATCH_LIST, PRESET, SETTINGS})


def _matcher(pattern: str):
    """``fnmatchcase(name, pattern)`` for a pattern with at most one ``*`` and no other wildcard,
    as a prefix and suffix test: fnmatch compiles a regular expression per pattern (~1 ms of a
    cached lint's 30 for these 13)."""
    if any(c in pattern for c in "?[") or pattern.count("*") > 1:
        raise ValueError(f"file kind pattern {pattern!r}: one '*' at most, no '?' or '['")
    if "*" not in pattern:
        return pattern.__eq__
    head, tail = pattern.split("*")
    least = len(head) + len(tail)
    return lambda name: len(name) >= least and name.startswith(head) and name.endswith(tail)


_MATCHERS = [(_matcher(pattern), kind) for pattern, kind in _NAME_PATTERNS]


def kind_of(path: str | PurePath) -> str | None:
    """The file kind for ``path``'s name, or None when dshctl does not lint it."""
    name = (path if isinstance(path, PurePath) else PurePath(path)).name
    for matches, kind in _MATCHERS:
        if matches(name):
            return kind
    return None


def manifest_kinds(value: Any) -> list[str]:
    """Which manifest schemas a loaded package.json answers to (empty: no ``dsh`` keys we know)."""
    dsh = value.get("dsh") if isinstance(value, dict) else None
    if not isinstance(dsh, dict):
        return []
    kinds = []
    if "profile" in dsh:
        kinds.append(PROFILE_MANIFEST)
    if "bundle" in dsh or "client" in dsh:
        kinds.append(BUNDLE_MANIFEST)
    return kinds


def refine_kind(kind: str, path: str | PurePath, value: Any) -> str:
    """Entry-list-named files that hold patches are patch lists.

    dsh's own examples and fixtures pass ``*.cordis.yml`` (and even ``cordis.yml``) files to
    ``--patch``. A row never has ``insert``, and a row without ``name`` is not a row, so a list with an
    ``insert`` item, or whose every item has an ``id`` and no ``name``, is linted as a patch list.
    ``agent.cordis.yml`` is always a preset tree (docs/dialect.md, "File kinds").
    """
    if kind != ENTRY_LIST or PurePath(path).name == "agent.cordis.yml" or not isinstance(value, list):
        return kind
    items = [v for v in value if isinstance(v, dict)]
    if not items or len(items) != len(value):
        return kind
    if any("insert" in v for v in items) or all("id" in v and "name" not in v for v in items):
        return PATCH_LIST
    return kind


# Directories never worth descending into.
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__", ".hg", ".svn"})


def discover(paths: Iterable[str | Path], known=None) -> list[tuple[Path, bool]]:
    """Files to lint with whether each was named explicitly; directories are walked for the files
    ``known(path)`` accepts (default: a kind by name). Here rather than in the lint pipeline so that a
    fully cached lint never imports the parser."""
    known = known or kind_of
    found: list[tuple[Path, bool]] = []
    missing: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
                base = Path(root)   # one Path per directory; its files join onto it
                found += [(file, False) for file in map(base.joinpath, sorted(files)) if known(file)]
        elif p.exists():
            found.append((p, True))
        else:
            missing.append(str(p))
    if missing:  # every one named, so that one run tells the user all of them
        more = f" (nor: {', '.join(missing[1:])})" if len(missing) > 1 else ""
        raise DshctlError(f"no such file or directory{more}", loc=Loc(missing[0]),
                          hint="pass files or directories that exist")
    return found
