"""npm package names as npm validates them, and paths built from them kept inside ``node_modules``.

A dependency name comes from a bundle's package.json or from a packument: data anyone can write.
It becomes a directory (``node_modules/<name>``), so a name such as ``../../.ssh`` must never get
that far. The rules are those of the npm package ``validate-npm-package-name`` (7.x, which
npm-package-arg applies to every dependency it installs): a name is installable when it is *valid
for old packages*, that is, has no error. The warnings that only bar *new* packages (capital
letters, ``~'!()*``, core module names, more than 214 characters) do not stop an install, so
``JSONStream`` stays installable, as with npm.
"""
from __future__ import annotations

import os
import re

_URL_FRIENDLY = re.compile(r"[A-Za-z0-9\-_.!~*'()]*")  # what encodeURIComponent leaves alone
_SCOPED = re.compile(r"(?:@([^/]+?)/)?([^/]+?)", re.S)
_EXCLUDED = ("node_modules", "favicon.ico")


def _url_friendly(text: str) -> bool:
    return _URL_FRIENDLY.fullmatch(text) is not None


def name_errors(name: object) -> list[str]:
    """The errors validate-npm-package-name reports for ``name`` (empty: installable)."""
    if not isinstance(name, str):
        return ["name must be a string"]
    errors = []
    if not name:
        errors.append("name length must be greater than zero")
    if name.startswith("."):
        errors.append("name cannot start with a period")
    if name.startswith("-"):
        errors.append("name cannot start with a hyphen")
    if name.startswith("_"):
        errors.append("name cannot start with an underscore")
    if name.strip() != name:
        errors.append("name cannot contain leading or trailing spaces")
    errors += [f"{x} is not a valid package name" for x in _EXCLUDED if name.lower() == x]
    if not _url_friendly(name):
        m = _SCOPED.fullmatch(name)
        scoped_ok = False
        if m:
            user, pkg = m.group(1), m.group(2)
            if pkg.startswith("."):
                errors.append("name cannot start with a period")
            scoped_ok = user is not None and _url_friendly(user) and _url_friendly(pkg)
        if not scoped_ok:
            errors.append("name can only contain URL-friendly characters")
    return errors


def is_valid_name(name: object) -> bool:
    return not name_errors(name)


def describe_invalid(name: object) -> str | None:
    """``None`` for an installable name, else one clause saying why it is not."""
    errors = name_errors(name)
    if not errors:
        return None
    shown = name if isinstance(name, str) and len(name) <= 120 else \
        (name[:117] + "..." if isinstance(name, str) else name)
    return f"{shown!r} is not a valid npm package name ({errors[0]})"


def is_inside(root: str | os.PathLike, path: str | os.PathLike) -> bool:
    """Whether ``path`` stays inside ``root`` once ``..`` and every existing symbolic link on the
    way are resolved (what is written there would land there)."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real != real_root and os.path.commonpath([real_root, real]) == real_root
