"""The ``files`` globs of lint config overrides: gitignore-style patterns over paths relative to the
config file's directory (docs/cli.md, "Configuring")."""
from __future__ import annotations

import re
from pathlib import PurePosixPath


def glob_match(pattern: str, rel: PurePosixPath) -> bool:
    """gitignore-style: a pattern without '/' matches a file name at any depth; '**' spans dirs."""
    directory_only = pattern.endswith("/")
    pattern = pattern.strip("/") if directory_only else pattern.lstrip("/")
    regex = _glob_regex(pattern)
    if "/" not in pattern:
        names = rel.parts[:-1] if directory_only else rel.parts
        return any(regex.fullmatch(part) for part in names)
    if directory_only:
        regex = _glob_regex(pattern + "/**")
    return bool(regex.fullmatch(rel.as_posix()))


def _glob_regex(pattern: str) -> re.Pattern:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)
