"""``@dshctl/tool-str-replace-editor``: dsh's ``str_replace_editor`` tool (``view``, ``create``,
``str_replace``, ``insert`` on absolute paths), confined to the session's workspace.

Texts are dsh's (``packages/fs/tool-str-replace-editor``, itself the Anthropic editor's): ``view`` numbers
lines as ``cat -n`` (six-wide numbers, two spaces) under ``Here's the content of <path> with line numbers
…``, lists a directory two levels deep without hidden entries, ``node_modules`` or ``__pycache__``, and
clips output past ``maxOutputChars`` (16000) with ``<response clipped>``; ``create`` refuses an existing
file; ``str_replace`` and ``insert`` follow the read-before-write rule of the other file tools (a ``view``
counts as a read). Config: ``root``, ``maxOutputChars``.
"""
from __future__ import annotations

import asyncio
import os

from .definition import Tool, text_result
from .fsbase import FsError, Roots, argument_error, check_observed, fs_error_result, observe
from .file_tools import read_for_edit
from .schemas import STR_REPLACE_EDITOR_PARAMETERS

name = "@dshctl/tool-str-replace-editor"
inject = ["tools"]
schema = {"type": "object", "default": {}, "properties": {
    "root": {"type": "string"},
    "maxOutputChars": {"type": "integer", "minimum": 1, "default": 16000},
}}

CLIPPED = ("<response clipped><NOTE>To save on context only part of this file has been shown to you. You should "
           "retry this tool after you have searched inside the file with `grep -n` in order to find the line "
           "numbers of what you are looking for.</NOTE>")
SKIPPED_DIRS = ("node_modules", "__pycache__")


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + CLIPPED


def view_file(display: str, content: str, limit: int, view_range) -> str:
    lines = content.split("\n")
    first, prompt = 1, f"Here's the content of {display} with line numbers (which has a total of {len(lines)} lines)"
    shown = lines
    if view_range is not None:
        if len(view_range) != 2:
            raise ValueError("Invalid `view_range`. It should be a list of two integers.")
        first, last = view_range
        where = f"[{first}, {last}]"
        if first < 1 or first > len(lines):
            raise ValueError(f"Invalid `view_range`: {where}. Its first element `{first}` should be within the "
                             f"range of lines of the file: [1, {len(lines)}]")
        if last > len(lines):
            raise ValueError(f"Invalid `view_range`: {where}. Its second element `{last}` should be smaller than "
                             f"the number of lines in the file: `{len(lines)}`")
        if last != -1 and last < first:
            raise ValueError(f"Invalid `view_range`: {where}. Its second element `{last}` should be larger or "
                             f"equal than its first `{first}`")
        shown = lines[first - 1:] if last == -1 else lines[first - 1:last]
        prompt += f" with view_range=[{first}, {last}]"
    numbered = "\n".join(f"{first + n:>6}  {line}" for n, line in enumerate(shown))
    return clip(f"{prompt}:\n{numbered}\n", limit)


def list_tree(directory: str, limit: int) -> str:
    rows = [f"d\t{directory}"]

    def visit(path: str, depth: int) -> None:
        for entry in sorted(os.scandir(path), key=lambda e: e.name):
            if entry.name.startswith(".") or entry.name in SKIPPED_DIRS:
                continue
            kind = "d" if entry.is_dir() else "f" if entry.is_file() else "?"
            rows.append(f"{kind}\t{os.path.join(path, entry.name)}")
            if kind == "d" and depth < 2 and not entry.is_symlink():
                visit(os.path.join(path, entry.name), depth + 1)
    visit(directory, 1)
    rows.sort(key=lambda row: row.split("\t", 1)[1])
    listing = clip("\n".join(rows) + "\n", limit)
    return (f"Here're the files and directories up to 2 levels deep in {directory}, excluding hidden items, "
            f"node_modules, and Python cache directories:\n{listing}\n")


def required(args: dict, key: str, command: str, allow_empty: bool = True) -> str:
    value = args.get(key)
    if value is None:
        raise ValueError(f"Parameter `{key}` is required for command: {command}")
    if not allow_empty and value == "":
        raise ValueError(f"Parameter `{key}` is empty for command: {command}")
    return value


class Editor:
    def __init__(self, roots: Roots, config: dict):
        self.roots, self.limit = roots, config["maxOutputChars"]

    async def execute(self, args, run):
        return await asyncio.to_thread(self._guarded, args, run)

    def _guarded(self, args, run):
        try:
            return text_result(self._run(args, run))
        except FsError as exc:
            return fs_error_result(exc, remedy=False)
        except ValueError as exc:
            return argument_error(str(exc))
        except UnicodeDecodeError:
            return fs_error_result(FsError(f'cannot read "{args.get("path")}": invalid UTF-8 text', "FS_NOT_TEXT"))
        except OSError as exc:
            return fs_error_result(FsError(f"{args.get('path')}: {exc.strerror or exc}", "FS_IO_ERROR"))

    def _target(self, run, path: str, command: str):
        if not path.strip():
            raise ValueError("path must be a non-empty string")
        if not os.path.isabs(path):
            raise ValueError(f"The path {path} is not an absolute path, it should start with `/`. Maybe you meant "
                             f"/{path}?")
        return self.roots.target(run, path, command)

    @staticmethod
    def _existing(target, command: str) -> None:
        if not os.path.lexists(target.real):
            raise FsError(f"The path {target.display} does not exist. Please provide a valid path.", "FS_NOT_FOUND")
        if target.real.is_dir() and command != "view":
            raise FsError(f"The path {target.display} is a directory and only the `view` command can be used on "
                          "directories", "FS_NOT_REGULAR_FILE")

    def _run(self, args, run) -> str:
        from dshctl.core.fsutil import atomic_write
        command = args["command"]
        if command == "insert":       # dsh's order: the insert's own arguments, the path, the read rule, the file
            if args.get("insert_line") is None:
                raise ValueError("Parameter `insert_line` is required for command: insert")
            required(args, "new_str", "insert")
        target = self._target(run, args["path"], command)
        if command == "view":
            self._existing(target, command)
            if target.real.is_dir():
                if args.get("view_range") is not None:
                    raise ValueError("The `view_range` parameter is not allowed when `path` points to a directory.")
                return list_tree(target.display, self.limit)
            text = read_for_edit(target, "read")
            observe(run, target)
            return view_file(target.display, text, self.limit, args.get("view_range"))
        if command == "create":
            content = required(args, "file_text", "create")
            if os.path.lexists(target.real):
                raise ValueError(f"File already exists at: {target.display}. Cannot overwrite files using command "
                                 "`create`.")
            target.real.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target.real, content)
            observe(run, target)
            return f"New file created successfully at: {target.display}"
        check_observed(run, target, "edit")
        old = required(args, "old_str", "str_replace", False) if command == "str_replace" else ""
        self._existing(target, command)
        before = read_for_edit(target)
        if command == "str_replace":
            after = self._replace(before, old, args.get("new_str") or "", target.display)
        else:
            after = self._insert(before, args)
        atomic_write(target.real, after)
        observe(run, target)
        return f"The file {target.display} has been edited successfully."

    @staticmethod
    def _replace(before: str, old: str, new: str, display: str) -> str:
        offsets, at = [], before.find(old)
        while at >= 0:
            offsets.append(at)
            at = before.find(old, at + len(old))
        if not offsets:
            raise FsError(f"No replacement was performed, old_str `{old}` did not appear verbatim in {display}.",
                          "FS_EDIT_NOT_FOUND")
        if len(offsets) > 1:
            lines = [before.count("\n", 0, o) + 1 for o in offsets]
            raise FsError(f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines "
                          f"[{', '.join(map(str, lines))}]. Please ensure it is unique", "FS_AMBIGUOUS_EDIT")
        return before[:offsets[0]] + new + before[offsets[0] + len(old):]

    @staticmethod
    def _insert(before: str, args: dict) -> str:
        line = args.get("insert_line")
        if line is None:
            raise ValueError("Parameter `insert_line` is required for command: insert")
        text = required(args, "new_str", "insert")
        lines = before.split("\n")
        if line < 0 or line > len(lines):
            raise ValueError(f"Invalid `insert_line` parameter: {line}. It should be within the range of lines of "
                             f"the file: [0, {len(lines)}]")
        return "\n".join(lines[:line] + text.split("\n") + lines[line:])


def apply(ctx, config):
    from .fs import workspace_root
    roots = Roots(workspace_root(ctx, config) if config.get("root") else None)
    tool = Tool("str_replace_editor", "View, create and edit files of the workspace by absolute path: view "
                "(numbered lines, or a directory two levels deep), create (a new file only), str_replace (one "
                "exact, unique match), insert (after a line).", Editor(roots, config).execute,
                STR_REPLACE_EDITOR_PARAMETERS)
    ctx.tools.register(ctx, tool.name, tool, ctx.get("toolScope") or "global")
