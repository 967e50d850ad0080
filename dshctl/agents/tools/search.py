"""``@dshctl/tool-fs-search``: dsh's ``glob`` and ``grep`` tools, confined to the session's workspace.

dsh runs ripgrep; dshctl walks the tree itself with ripgrep's rules (``pathspec`` reads the gitignore
patterns), so the results read as dsh's:

- ``glob`` lists files (never directories) whose path matches, hidden and ignored ones included, VCS
  metadata directories left out, oldest modification first; more than ``globMaxResults`` (100) shows the
  first ones and says how many there were. A pattern without ``/`` matches the file name at any depth.
- ``grep`` searches text files for a regular expression (Python's ``re``: ripgrep's common syntax),
  skipping hidden files, binary files and what ``.gitignore`` / ``.ignore`` exclude (``.gitignore`` only
  inside a git work tree, as ripgrep); ``include`` is one glob on the file name or path. Matches are
  grouped by file (``Line N: text``), at most ``grepMaxMatches`` (250) inline.

Paths in results are relative to the workspace when inside it. Symlinks are not followed out of the root.
"""
from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from .definition import Tool, text_result
from .fsbase import FsError, Roots, argument_error, fs_error_result
from .schemas import GLOB_PARAMETERS, GREP_PARAMETERS

name = "@dshctl/tool-fs-search"
inject = ["tools"]
schema = {"type": "object", "default": {}, "properties": {
    "root": {"type": "string"},
    "globMaxResults": {"type": "integer", "minimum": 1, "default": 100},
    "grepMaxMatches": {"type": "integer", "minimum": 1, "default": 250},
}}

VCS_DIRS = frozenset({".git", ".svn", ".hg", ".bzr", ".jj", ".sl"})
LINE_MAX_BYTES = 2000
BINARY_SAMPLE = 8192
SCAN_LINE_BYTES = 1 << 20


def expand_braces(pattern: str) -> list[str]:
    """``*.{js,ts}`` as ``*.js``, ``*.ts`` (ripgrep's globs alternate; gitignore patterns do not)."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[:match.start()], pattern[match.end():]
    return [p for alt in match.group(1).split(",") for p in expand_braces(head + alt + tail)]


def glob_spec(pattern: str):
    import pathspec   # only when a search runs
    return pathspec.GitIgnoreSpec.from_lines(expand_braces(pattern))


def in_git_tree(directory: Path) -> bool:
    return any((parent / ".git").exists() for parent in (directory, *directory.parents))


class Walker:
    """Files under ``base`` (a directory inside ``root``), ripgrep's way."""

    def __init__(self, root: Path, base: Path, *, ignore: bool, hidden: bool):
        self.root, self.base, self.ignore, self.hidden = root, base, ignore, hidden
        self.git = ignore and in_git_tree(base)

    def _rules(self, directory: Path, inherited: list) -> list:
        if not self.ignore:
            return inherited
        import pathspec
        rules = list(inherited)
        for name in (".gitignore", ".ignore") if self.git else (".ignore",):
            try:
                lines = (directory / name).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            rules.append((directory, pathspec.GitIgnoreSpec.from_lines(lines)))
        return rules

    @staticmethod
    def _ignored(path: Path, is_dir: bool, rules: list) -> bool:
        for directory, spec in rules:
            rel = path.relative_to(directory).as_posix() + ("/" if is_dir else "")
            if spec.match_file(rel):
                return True
        return False

    def files(self):
        stack = [(self.base, self._rules(self.base, []))]
        while stack:
            directory, rules = stack.pop()
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name in VCS_DIRS or (not self.hidden and entry.name.startswith(".")):
                    continue
                path = Path(entry.path)
                if entry.is_dir(follow_symlinks=False):
                    if not self._ignored(path, True, rules):
                        stack.append((path, self._rules(path, rules)))
                elif entry.is_file(follow_symlinks=True) and not self._ignored(path, False, rules):
                    real = path.resolve() if entry.is_symlink() else path
                    if real.is_relative_to(self.root):
                        yield path


class SearchTools:
    def __init__(self, roots: Roots, config: dict):
        self.roots = roots
        self.glob_max = config["globMaxResults"]
        self.grep_max = config["grepMaxMatches"]

    def definitions(self) -> list[Tool]:
        safe = lambda _args: True   # noqa: E731 - read-only: any number in parallel
        return [
            Tool("glob", "List the workspace's files whose paths match a glob, oldest change first.",
                 self.glob, GLOB_PARAMETERS, is_concurrency_safe=safe),
            Tool("grep", "Search the workspace's text files for a regular expression; matches by file, with "
                         "line numbers.", self.grep, GREP_PARAMETERS, is_concurrency_safe=safe),
        ]

    async def glob(self, args, run):
        return await asyncio.to_thread(self._guarded, self._glob, args, run)

    async def grep(self, args, run):
        return await asyncio.to_thread(self._guarded, self._grep, args, run)

    def _guarded(self, fn, args, run):
        try:
            return fn(args, run)
        except FsError as exc:
            return fs_error_result(exc)
        except ValueError as exc:
            return argument_error(str(exc))

    def _base(self, run, path: str | None, verb: str) -> tuple[Path, Path, str]:
        root = Path(self.roots.root(run))
        if path is not None and not path.strip():
            raise ValueError("path must be a non-empty string when given")
        target = self.roots.target(run, path or ".", verb)
        if not target.real.exists():
            raise FsError(f'cannot {verb} "{target.display}": not found', "FS_NOT_FOUND")
        return root.resolve(), target.real, str(root)

    @staticmethod
    def _shown(path: Path, real_root: Path, root: str) -> str:
        """Relative to the workspace when inside it (dsh shows workdir-relative paths)."""
        try:
            return path.relative_to(real_root).as_posix()
        except ValueError:
            return os.path.relpath(path, root)

    def _glob(self, args, run):
        pattern = args["pattern"]
        if not pattern.strip():
            raise ValueError("pattern must be a non-empty string")
        real_root, base, root = self._base(run, args.get("path"), "glob")
        if not base.is_dir():
            raise FsError(f'cannot glob "{base}": not a directory', "FS_NOT_DIRECTORY")
        spec = glob_spec(pattern)
        found = [p for p in Walker(real_root, base, ignore=False, hidden=True).files()
                 if spec.match_file(p.relative_to(base).as_posix())]
        if not found:
            return text_result("No files found")
        found.sort(key=lambda p: (p.stat().st_mtime_ns, p.as_posix()))
        shown = [self._shown(p, real_root, root) for p in found[:self.glob_max]]
        text = "\n".join(shown)
        if len(found) > self.glob_max:
            text += (f"\n\n(Showing {len(shown)} of {len(found)} paths in modification-time order. "
                     "Narrow the pattern or path to see the rest.)")
        return text_result(text)

    def _grep(self, args, run):
        pattern, include = args["pattern"], args.get("include")
        if pattern == "":
            raise ValueError("pattern must be a non-empty string")
        check_include(include)
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise FsError(f"grep pattern rejected: {exc}", "SEARCH_INVALID_PATTERN") from None
        real_root, base, root = self._base(run, args.get("path"), "grep")
        files = [base] if base.is_file() else list(Walker(real_root, base, ignore=True, hidden=False).files())
        spec = glob_spec(include) if include is not None else None
        matches: list[tuple[str, int, str]] = []
        seen = 0
        for path in sorted(files):
            if spec is not None and path != base and not spec.match_file(path.relative_to(base).as_posix()):
                continue
            for number, line in matching_lines(path, regex):
                seen += 1
                if len(matches) < self.grep_max:
                    matches.append((self._shown(path, real_root, root), number, line))
        if seen == 0:
            return text_result("No matches found")
        header = (f"Found {len(matches)} of {seen} matches" if seen > len(matches)
                  else f"Found {seen} {'match' if seen == 1 else 'matches'}")
        text = f"{header}\n\n{group_by_file(matches)}"
        if seen > len(matches):
            text += "\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)"
        return text_result(text)


def check_include(include: str | None) -> None:
    if include is None:
        return
    if not include.strip():
        raise ValueError("include must be a non-empty glob when given")
    if include.startswith("!"):
        raise ValueError('include must be a positive glob filter; negated patterns ("!…") are not supported')
    depth = 0
    for char in include:
        depth = depth + 1 if char == "{" else max(0, depth - 1) if char == "}" else depth
        if char == "," and depth == 0:
            raise ValueError("include must be one glob, not a comma-separated list (use {a,b} alternation "
                             "instead)")


def matching_lines(path: Path, regex: re.Pattern):
    """(line number, preview) of each matching line, read line by line: a huge file or a giant line costs
    no more memory than ``SCAN_LINE_BYTES`` (the rest of such a line is skipped, not searched)."""
    try:
        f = open(path, "rb")
    except OSError:
        return
    with f:
        if b"\0" in f.read(BINARY_SAMPLE):
            return
        f.seek(0)
        number = 0
        while raw := f.readline(SCAN_LINE_BYTES):
            number += 1
            if not raw.endswith(b"\n"):
                while (rest := f.readline(SCAN_LINE_BYTES)) and not rest.endswith(b"\n"):
                    pass       # the part of a giant line past the cap
            line = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", errors="replace")
            if regex.search(line):
                data = line.encode()
                yield number, (line if len(data) <= LINE_MAX_BYTES else
                               data[:LINE_MAX_BYTES].decode("utf-8", errors="ignore") + " (line truncated)")


def group_by_file(matches: list[tuple[str, int, str]]) -> str:
    sections: dict[str, list[str]] = {}
    for path, number, line in matches:
        sections.setdefault(path, []).append(f"Line {number}: {line}")
    return "\n\n".join(f"{path}\n" + "\n".join(rows) for path, rows in sections.items())


def apply(ctx, config):
    from .fs import workspace_root
    roots = Roots(workspace_root(ctx, config) if config.get("root") else None)
    scope = ctx.get("toolScope") or "global"
    for tool in SearchTools(roots, config).definitions():
        ctx.tools.register(ctx, tool.name, tool, scope)
