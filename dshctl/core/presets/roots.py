"""Which roots to scan, in which order (dsh-config.md §6 launcher overlay and §7 roots).

Order: the roots on the composed profile's ``agent-presets`` row, then the shipped root (dshctl's
``presets/``, trust ``system``), then ``$DSH_HOME/.agent-presets`` (trust ``user``) unless
``includeUserRoot`` is false. dsh's launcher overwrites that row's ``roots`` with the shipped root,
so user-configured roots on the row never take effect; we reproduce that.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dshctl.core.home import expand_tilde
from dshctl.errors import DshctlError

from .model import TRUST_LEVELS, Root

ROW_ID = "agent-presets"
USER_ROOT_DIR = ".agent-presets"


def shipped_root() -> Root:
    from dshctl.core.data import presets_dir

    return Root(Path(presets_dir()), "system", "shipped")


def user_root(home: Path) -> Root:
    return Root(Path(home) / USER_ROOT_DIR, "user", "user")


def make_root(path: str | os.PathLike, trust: str = "user", origin: str = "cli") -> Root:
    """A root from user input: ``~`` expands, relative paths are taken from the current directory."""
    return Root(Path(os.path.abspath(expand_tilde(str(path)))), trust, origin)


def assemble(configured: list[Root], home: Path, *, include_user_root: bool = True) -> list[Root]:
    """Configured roots, then shipped, then the user root; a directory listed twice keeps its first place."""
    ordered = list(configured) + [shipped_root()]
    if include_user_root:
        ordered.append(user_root(home))
    unique: list[Root] = []
    seen: set[str] = set()
    for root in ordered:
        key = os.path.realpath(root.path)
        if key not in seen:
            seen.add(key)
            unique.append(root)
    return unique


@dataclass
class ProfileRoots:
    roots: list[Root]
    include_user_root: bool = True
    note: str | None = None  # why the profile's settings were not (fully) used, for one stderr line


def roots_from_row_config(config: Any) -> ProfileRoots:
    """``{roots, includeUserRoot}`` from the composed ``agent-presets`` row. With the launcher overlay
    applied (compose's layer 5) ``roots`` is already the shipped root, exactly as dsh boots it."""
    if not isinstance(config, dict):
        return ProfileRoots([], True)
    roots, skipped = [], 0
    for item in config.get("roots") or []:
        if isinstance(item, dict) and isinstance(item.get("path"), str) and item["path"].strip():
            trust = item.get("trust") if item.get("trust") in TRUST_LEVELS else "user"
            roots.append(make_root(item["path"], trust, "profile"))
        else:
            skipped += 1
    note = (f"ignored {skipped} agent-presets root(s) without a string `path`" if skipped else None)
    return ProfileRoots(roots, config.get("includeUserRoot", True) is not False, note)


# dsh creates these profiles from a template on first use (dsh-config.md §2); their bundles carry the
# agent-presets row, which the launcher overlay points at the shipped root. So for a never-created
# template profile the shipped and user roots are exactly what dsh would scan: nothing to note.
TEMPLATE_PROFILES = frozenset({"web", "headless"})


def profile_roots(home: Path, profile: str) -> ProfileRoots:
    """The roots the composed profile asks for; on a failure, the defaults and a note saying why.

    No note when the profile was never created and dsh would create it from a template: the
    defaults are then what dsh itself uses. A missing profile of another name (dsh refuses it) and
    an existing profile that fails to compose get one note."""
    from dshctl.core.compose.composition import compose_profile
    from dshctl.core.compose.profile import profile_dir

    try:
        directory = profile_dir(home, profile)  # an invalid name fails here, with dsh's text
        if not os.path.lexists(directory):
            return _missing_profile(profile, directory)
        composition = compose_profile(home, profile, launcher_overlays=True)
    except DshctlError as err:
        return ProfileRoots([], True, f"profile {profile!r} did not compose ({err}); using the shipped "
                                      "and user preset roots")
    row = next((r for r in getattr(composition, "rows", []) or []
                if isinstance(r, dict) and r.get("id") == ROW_ID), None)
    if row is None:
        return ProfileRoots([], True, None)
    return roots_from_row_config(row.get("config"))


def _missing_profile(profile: str, directory: Path) -> ProfileRoots:
    if profile in TEMPLATE_PROFILES:
        return ProfileRoots([], True, None)
    return ProfileRoots([], True, f"profile {profile!r} does not exist ({directory}); using the shipped "
                                  "and user preset roots")


def resolve_roots(home: Path, profile: str, explicit: list[str] | None = None,
                  no_user_root: bool = False) -> tuple[list[Root], str | None]:
    """Roots for a command: ``--root`` paths replace the profile's roots; ``--no-user-root`` drops the
    user root. Returns the roots and an optional note for stderr."""
    if explicit:
        configured, include, note = [make_root(p) for p in explicit], True, None
    else:
        found = profile_roots(home, profile)
        configured, include, note = found.roots, found.include_user_root, found.note
    return assemble(configured, home, include_user_root=include and not no_user_root), note

