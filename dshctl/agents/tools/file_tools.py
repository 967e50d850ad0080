"""``@dshctl/tool-fs``: dsh's ``read``, ``write`` and ``edit`` tools, confined to the session's workspace.

Names, parameters and result texts are dsh's (``packages/fs/tool-fs``): ``read`` returns the
``<path>…</path>`` / ``<type>file</type>`` / ``<content>`` envelope with ``N: text`` lines and dsh's
continuation or end-of-file footer; ``write`` says ``Created file`` / ``Updated file``; ``edit`` replaces a
literal string once (or every time with ``replace_all``) and refuses a missing or non-unique match with
dsh's messages. As dsh's default observation policy does, a session must read a file before it overwrites
or edits it, and a file that changed since that read is refused (``FS_NOT_OBSERVED`` /
``FS_STALE_VERSION``). Writes are atomic (temp + rename) and keep the file's mode.

Config: ``root`` (default: the session's cwd; a relative root is relative to the declaring file),
``readLimit`` (2000 lines), ``readMaxLineLength`` (2000 chars), ``readMaxBytes`` (51200).
"""
from __future__ import annotations

import asyncio
import codecs
import os
from pathlib import Path

from . import safe_fs
from .definition import Tool, error_result, text_result
from .fsbase import (OBSERVED, FsError, Roots, Target, argument_error, check_observed, fs_error_result, regular_file,
                     positive_int, session_key, version_of)
from .schemas import EDIT_PARAMETERS, READ_PARAMETERS, WRITE_PARAMETERS
from .workspace import OutsideWorkspace

name = "@dshctl/tool-fs"
inject = ["tools"]
schema = {"type": "object", "default": {}, "properties": {
    "root": {"type": "string"},
    "readLimit": {"type": "integer", "minimum": 1, "default": 2000},
    "readMaxLineLength": {"type": "integer", "minimum": 1, "default": 2000},
    "readMaxBytes": {"type": "integer", "minimum": 1, "default": 50 * 1024},
}}

BINARY_SAMPLE_BYTES = 8192
CHUNK = 64 * 1024


def _always(_args) -> bool:
    return True


class Window:
    """Numbered lines ``offset..offset+limit-1`` of a text, capped per line and in total bytes."""

    def __init__(self, offset: int, limit: int, max_line: int, max_bytes: int):
        self.offset, self.limit, self.max_line, self.max_bytes = offset, limit, max_line, max_bytes
        self.lines: list[tuple[int, str]] = []
        self.total = 0
        self.bytes = 0
        self.capped = False

    def add(self, raw: str) -> None:
        self.total += 1
        if self.capped or self.total < self.offset or len(self.lines) >= self.limit:
            return
        raw = raw[:-1] if raw.endswith("\r") else raw
        text = raw if len(raw) <= self.max_line else \
            f"{raw[:self.max_line]}... (line truncated to {self.max_line} chars)"
        size = len(text.encode()) + (1 if self.lines else 0)
        if self.bytes + size > self.max_bytes:
            self.capped = True
            return
        self.bytes += size
        self.lines.append((self.total, text))

    def render(self, display: str) -> str:
        end = self.lines[-1][0] if self.lines else max(0, self.offset - 1)
        if self.capped:
            footer = f"(Output capped. Showing lines {self.offset}-{end}. Use offset={end + 1} to continue.)"
        elif end < self.total:
            footer = (f"(Showing lines {self.offset}-{end} of {self.total}. "
                      f"Use offset={end + 1} to continue.)")
        else:
            footer = f"(End of file - total {self.total} lines)"
        body = "\n".join(f"{n}: {t}" for n, t in self.lines) + "\n\n" + footer if self.lines else footer
        return f"<path>{display}</path>\n<type>file</type>\n<content>\n{body}\n</content>"


def scan_text(path: Path, display: str, window: Window, verb: str = "read") -> None:
    """Feed every line of ``path`` to ``window`` in bounded memory (a giant line is kept only to its cap)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    cap = window.max_line + 1
    line, seen = "", 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            if seen < BINARY_SAMPLE_BYTES and b"\0" in chunk[:BINARY_SAMPLE_BYTES - seen]:
                raise FsError(f'cannot {verb} "{display}": binary file', "FS_NOT_TEXT")
            seen += len(chunk)
            try:
                text = decoder.decode(chunk)
            except UnicodeDecodeError:
                raise FsError(f'cannot {verb} "{display}": invalid UTF-8 text', "FS_NOT_TEXT") from None
            *complete, rest = text.split("\n")
            for part in complete:
                window.add((line + part)[:cap] if len(line) < cap else line)
                line = ""
            if len(line) < cap:
                line = (line + rest)[:cap]
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise FsError(f'cannot {verb} "{display}": invalid UTF-8 text', "FS_NOT_TEXT") from None
    if line:
        window.add(line)


def read_for_edit(target: Target, verb: str = "edit") -> str:
    raw = target.real.read_bytes()
    if b"\0" in raw[:BINARY_SAMPLE_BYTES if verb == "read" else len(raw)]:
        raise FsError(f'cannot {verb} "{target.display}": binary file', "FS_NOT_TEXT")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FsError(f'cannot {verb} "{target.display}": invalid UTF-8 text', "FS_NOT_TEXT") from None


def literal_edit(content: str, old: str, new: str, replace_all: bool, display: str) -> str:
    count = content.count(old)
    if count == 0:
        raise FsError(f'old_string was not found in "{display}"', "FS_EDIT_NOT_FOUND")
    if count > 1 and not replace_all:
        raise FsError(f'old_string matched {count} times in "{display}"; provide a more specific old_string '
                      "or set replace_all to true", "FS_AMBIGUOUS_EDIT")
    return content.replace(old, new) if replace_all else content.replace(old, new, 1)


class FileTools:
    def __init__(self, roots: Roots, config: dict, ctx=None):
        self.roots = roots
        self.ctx = ctx                     # for ctx.sandboxPolicy: the same policy bash runs under
        self.limit = config["readLimit"]
        self.max_line = config["readMaxLineLength"]
        self.max_bytes = config["readMaxBytes"]
        self.observed = OBSERVED           # (session, real path) -> version seen, shared with the other tools

    def definitions(self) -> list[Tool]:
        return [
            Tool("read", "Read a UTF-8 text file of the workspace as numbered lines (offset/limit for a window).",
                 self.read, READ_PARAMETERS, is_concurrency_safe=_always),
            Tool("write", "Create a UTF-8 text file, or replace one this session has read, with the given content.",
                 self.write, WRITE_PARAMETERS),
            Tool("edit", "Replace literal text in a UTF-8 file this session has read (once, or every match).",
                 self.edit, EDIT_PARAMETERS),
        ]

    async def read(self, args, run):
        return await asyncio.to_thread(self._guarded, self._read, args, run)

    async def write(self, args, run):
        return await asyncio.to_thread(self._guarded, self._write, args, run)

    async def edit(self, args, run):
        return await asyncio.to_thread(self._guarded, self._edit, args, run)

    def fence(self, run, target, write: bool) -> None:
        """With a sandbox row composed, the session's policy checks the path in-process, as the kernel
        checks a confined command's (docs/sandbox.md); without one the workspace check alone applies."""
        policies = self.ctx.get("sandboxPolicy") if self.ctx is not None else None
        if policies is None:
            return
        from dshctl.agents.sandbox import fence
        policy = policies.resolve(getattr(getattr(run, "agent", None), "session", None))
        check = fence.checked_write_target if write else fence.checked_read_target
        check(policy, str(target.real), target.display)

    def _guarded(self, fn, args, run):
        from dshctl.agents.sandbox.fence import FsSandboxDenied
        try:
            return fn(args, run)
        except FsError as exc:
            return fs_error_result(exc)
        except FsSandboxDenied as exc:
            return error_result(exc.message, exc.code)
        except ValueError as exc:
            return argument_error(str(exc))
        except PermissionError:
            return fs_error_result(FsError(f"permission denied: {args.get('file_path')}", "FS_PERMISSION_DENIED"))
        except OSError as exc:
            return fs_error_result(FsError(f"{args.get('file_path')}: {exc.strerror or exc}", "FS_IO_ERROR"))

    def _read(self, args, run):
        offset = positive_int(args.get("offset", 1), "offset")
        limit = positive_int(args.get("limit", self.limit), "limit")
        if limit > self.limit:
            raise ValueError(f"limit must be less than or equal to {self.limit}")
        target = self.roots.target(run, args["file_path"], "read")
        self.fence(run, target, write=False)
        if not target.real.exists():
            self.observed[(session_key(run), str(target.real))] = None
        regular_file(target, "read")
        version = version_of(target.real)
        window = Window(offset, limit, self.max_line, self.max_bytes)
        scan_text(target.real, target.display, window)
        if not window.capped and offset > window.total and not (window.total == 0 and offset == 1):
            raise FsError(f'offset {offset} is out of range for "{target.display}" ({window.total} lines)',
                          "FS_NOT_FOUND")
        self.observed[(session_key(run), str(target.real))] = version
        return text_result(window.render(target.display))

    def write_inside(self, run, target, text: str) -> None:
        """Temp file + rename through no-follow directory descriptors from the workspace root: a
        directory swapped for a link after the path was checked fails the call instead of leading
        out (safe_fs.py); an existing file's mode is kept, missing parents are made."""
        root = Path(self.roots.root(run)).resolve()
        try:
            safe_fs.write_atomic(root, target.real, text.encode("utf-8"))
        except OutsideWorkspace as exc:
            raise FsError(f'cannot write "{target.display}": {exc}', "FS_OUTSIDE_WORKSPACE") from None

    def _write(self, args, run):
        target = self.roots.target(run, args["file_path"], "write")
        self.fence(run, target, write=True)
        if target.real.exists() and not target.real.is_file():
            raise FsError(f'cannot write "{target.display}": not a regular file', "FS_NOT_REGULAR_FILE")
        check_observed(run, target, "write")
        existed = target.real.exists()
        self.write_inside(run, target, args["content"])
        self.observed[(session_key(run), str(target.real))] = version_of(target.real)
        verb = "Updated" if existed else "Created"
        return text_result(f"<path>{target.display}</path>\n<type>file</type>\n<content>\n{verb} file\n</content>")

    def _edit(self, args, run):
        old, new = args["old_string"], args["new_string"]
        if not args["file_path"].strip():
            raise ValueError("file_path must be a non-empty string")
        if old == "":
            raise ValueError("old_string must be a non-empty string")
        if old == new:
            raise ValueError("old_string and new_string must differ")
        target = self.roots.target(run, args["file_path"], "edit")
        self.fence(run, target, write=True)
        check_observed(run, target, "edit")
        regular_file(target, "edit")
        original = read_for_edit(target)
        crlf = "\r\n" in original
        content = original.replace("\r\n", "\n") if crlf else original
        edited = literal_edit(content, old.replace("\r\n", "\n"), new.replace("\r\n", "\n"),
                              args.get("replace_all") is True, target.display)
        self.write_inside(run, target, edited.replace("\n", "\r\n") if crlf else edited)
        self.observed[(session_key(run), str(target.real))] = version_of(target.real)
        text = (f"The file {target.display} has been updated. All occurrences were successfully replaced."
                if args.get("replace_all") is True else f"The file {target.display} has been updated successfully.")
        return text_result(text)


def apply(ctx, config):
    from .fs import workspace_root
    roots = Roots(workspace_root(ctx, config) if config.get("root") else None)
    scope = ctx.get("toolScope") or "global"
    from .image import ReadImage   # beside read, as dsh's tool-fs registers it
    for tool in [*FileTools(roots, config, ctx).definitions(), ReadImage(roots, ctx).definition()]:
        ctx.tools.register(ctx, tool.name, tool, scope)
