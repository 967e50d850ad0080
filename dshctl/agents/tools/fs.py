"""``@dshctl/fs-tools``: read_file, list_dir, search and write_file, scoped to a workspace root.

Reads, listings and searches run in parallel with one another; a write runs in parallel only with calls
that touch other paths (the scheduler compares footprints). Paths resolving outside the root are refused
with an error result. The row's config: ``root`` (default: the host's working directory), ``write``
(false leaves write_file out), ``maxBytes`` (largest file read whole). A relative ``root`` is relative to
the file that declares the row.
"""
from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from . import safe_fs
from .definition import Tool, error_result, text_result
from .workspace import OutsideWorkspace, Workspace

name = "@dshctl/fs-tools"
inject = ["tools"]
schema = {"type": "object", "default": {}, "properties": {
    "root": {"type": "string"},
    "write": {"type": "boolean", "default": True},
    "maxBytes": {"type": "integer", "minimum": 1, "default": 262144},
    "maxMatches": {"type": "integer", "minimum": 1, "default": 200},
}}

_PATH = {"type": "string", "description": "a path relative to the workspace root"}


def _always(_args) -> bool:
    return True


class FsTools:
    def __init__(self, workspace: Workspace, config: dict):
        self.ws = workspace
        self.max_bytes = config["maxBytes"]
        self.max_matches = config["maxMatches"]

    def _reads(self, key: str):
        return lambda args: [(self.ws.key(args.get(key, ".") if isinstance(args, dict) else ""), "r")]

    def definitions(self, write: bool) -> list[Tool]:
        tools = [
            Tool("read_file", "Read a UTF-8 text file of the workspace; optional 1-based line range.",
                 self.read_file, {"type": "object", "required": ["path"], "additionalProperties": False,
                                  "properties": {"path": _PATH, "startLine": {"type": "integer", "minimum": 1},
                                                 "endLine": {"type": "integer", "minimum": 1}}},
                 is_concurrency_safe=_always, resources=self._reads("path")),
            Tool("list_dir", "List a directory of the workspace (directories end with /).",
                 self.list_dir, {"type": "object", "additionalProperties": False,
                                 "properties": {"path": {**_PATH, "default": "."}}},
                 is_concurrency_safe=_always, resources=self._reads("path")),
            Tool("search", "Search the workspace's text files for a regular expression; returns path:line: text.",
                 self.search, {"type": "object", "required": ["pattern"], "additionalProperties": False,
                               "properties": {"pattern": {"type": "string"}, "path": {**_PATH, "default": "."}}},
                 is_concurrency_safe=_always, resources=self._reads("path")),
        ]
        if write:
            tools.append(Tool(
                "write_file", "Create or replace a UTF-8 text file of the workspace (parent directories are made).",
                self.write_file, {"type": "object", "required": ["path", "content"], "additionalProperties": False,
                                  "properties": {"path": _PATH, "content": {"type": "string"}}},
                is_concurrency_safe=_always,
                resources=lambda args: [(self.ws.key(args.get("path") if isinstance(args, dict) else ""), "w")]))
        return tools

    async def read_file(self, args, run):
        return await asyncio.to_thread(self._guarded, self._read, args)

    async def list_dir(self, args, run):
        return await asyncio.to_thread(self._guarded, self._list, args)

    async def search(self, args, run):
        return await asyncio.to_thread(self._guarded, self._search, args)

    async def write_file(self, args, run):
        return await asyncio.to_thread(self._guarded, self._write, args)

    def _guarded(self, fn, args):
        try:
            return fn(args)
        except OutsideWorkspace as exc:
            return error_result(str(exc), "PATH_OUTSIDE_WORKSPACE")
        except FileNotFoundError:
            return error_result(f"no such file or directory: {args.get('path')!r}", "PATH_NOT_FOUND")
        except IsADirectoryError:
            return error_result(f"{args.get('path')!r} is a directory; use list_dir", "PATH_IS_DIRECTORY")
        except NotADirectoryError:
            return error_result(f"{args.get('path')!r} is not a directory", "PATH_NOT_DIRECTORY")
        except UnicodeDecodeError:
            return error_result(f"{args.get('path')!r} is not UTF-8 text", "NOT_TEXT")
        except OSError as exc:
            return error_result(f"{args.get('path')!r}: {exc.strerror or exc}", "OS_ERROR")

    def _read(self, args):
        target = self.ws.resolve(args["path"])
        if target.is_dir():
            raise IsADirectoryError(args["path"])
        if target.stat().st_size > self.max_bytes and "startLine" not in args:
            return error_result(f"{args['path']!r} is larger than {self.max_bytes} bytes; read a line range "
                                "(startLine/endLine)", "FILE_TOO_LARGE")
        data, _size = safe_fs.read_bytes(self.ws.root, target)  # no link swapped in since resolve
        lines = data.decode("utf-8").splitlines(keepends=True)
        start = args.get("startLine", 1)
        end = args.get("endLine", len(lines))
        return text_result("".join(lines[start - 1:end]))

    def _list(self, args):
        target = self.ws.resolve(args.get("path", "."))
        with safe_fs.open_dir(self.ws.root, target) as fd:
            entries = sorted(os.scandir(fd), key=lambda e: e.name)
        return text_result("\n".join(e.name + ("/" if e.is_dir() else "") for e in entries))

    def _search(self, args):
        try:
            pattern = re.compile(args["pattern"])
        except re.error as exc:
            return error_result(f"invalid regular expression: {exc}", "BAD_PATTERN")
        base = self.ws.resolve(args.get("path", "."))
        found: list[str] = []
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in files:
            real = path.resolve()
            if not real.is_relative_to(self.ws.root):
                continue   # a symlink out of the workspace is not searched
            try:
                text = safe_fs.read_bytes(self.ws.root, real)[0].decode("utf-8")
            except (UnicodeDecodeError, OSError, OutsideWorkspace):
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{self.ws.relative(path)}:{number}: {line}")
                    if len(found) >= self.max_matches:
                        return text_result("\n".join(found) + f"\n(stopped at {self.max_matches} matches)")
        return text_result("\n".join(found) if found else "no matches")

    def _write(self, args):
        target = self.ws.resolve(args["path"])
        safe_fs.write_atomic(self.ws.root, target, args["content"].encode("utf-8"))
        return text_result(f"wrote {len(args['content'].encode())} bytes to {self.ws.relative(target)}")


def declaring_dir(ctx) -> Path:
    """The directory of the file whose row mounted this plugin (relative paths in config mean there)."""
    loader = ctx.get("loader")
    entry = getattr(loader, "fibers", {}).get(ctx.fiber) if loader is not None else None
    return Path(entry.declared_dir) if entry is not None else Path.cwd()


def workspace_root(ctx, config) -> Path:
    if config.get("root"):
        root = Path(os.path.expanduser(config["root"]))
        if not root.is_absolute():
            root = declaring_dir(ctx) / root
        return root
    return Path.cwd()


def apply(ctx, config):
    fs = FsTools(Workspace(workspace_root(ctx, config)), config)
    scope = ctx.get("toolScope") or "global"   # inside a preset's tree: that preset's layer
    for tool in fs.definitions(config["write"]):
        ctx.tools.register(ctx, tool.name, tool, scope)
