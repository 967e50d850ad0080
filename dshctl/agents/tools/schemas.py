"""The parameter schemas of dsh's model-facing tools, as dsh 0.1.1-rc.2 sends them to the model.

Facts carried over (names, types, required, enums, item shapes, property order) so that presets and
prompts written for dsh work unchanged; the descriptions are dshctl's own. ``tests/dsh/test_tool_schemas.py``
compares these with the ``tools`` a real dsh headless turn sends, description text aside.
"""
from __future__ import annotations


def _obj(properties: dict, required: list[str]) -> dict:
    out = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def _s(description: str, **extra) -> dict:
    return {"type": "string", "description": description, **extra}


ESCALATION_MODES = ["workspace-write", "danger-full-access"]


def escalation(subject: str) -> dict:
    return {
        "sandbox_permissions": _s(f"A wider sandbox mode for this {subject}; only as a retry of one the sandbox "
                                  "just refused, with a justification.", enum=list(ESCALATION_MODES)),
        "justification": _s(f"With sandbox_permissions: one sentence telling the user why this {subject} "
                            "needs more access."),
    }


READ_PARAMETERS = _obj({
    "file_path": _s("The file to read; relative paths start at the workspace."),
    "offset": {"type": "number", "description": "First line to return, counting from 1 (default 1)."},
    "limit": {"type": "number", "description": "How many lines to return at most (default 2000)."},
}, ["file_path"])

WRITE_PARAMETERS = _obj({
    "file_path": _s("The file to create or replace; relative paths start at the workspace."),
    "content": _s("The whole new content of the file, as UTF-8 text."),
    **escalation("file operation"),
}, ["file_path", "content"])

EDIT_PARAMETERS = _obj({
    "file_path": _s("The file to change; relative paths start at the workspace."),
    "old_string": _s("The exact text to find (no patterns, whitespace counts)."),
    "new_string": _s("The text that takes its place; empty deletes it."),
    "replace_all": {"type": "boolean", "description": "Replace every match; without it old_string must occur "
                                                      "exactly once."},
    **escalation("file operation"),
}, ["file_path", "old_string", "new_string"])

GLOB_PARAMETERS = _obj({
    "pattern": _s('A glob for file paths, e.g. "**/*.py"; one without "/" matches file names at any depth.'),
    "path": _s("The directory to search (default: the workspace); relative paths start at the workspace."),
}, ["pattern"])

GREP_PARAMETERS = _obj({
    "pattern": _s("The regular expression to look for in file contents."),
    "path": _s("A file or directory to search (default: the workspace); relative paths start at the workspace."),
    "include": _s('One glob naming the files to search, e.g. "*.py" or "*.{js,ts}" (no lists, no "!").'),
}, ["pattern"])

BASH_PARAMETERS = _obj({
    "command": _s("The command line, run by bash -c."),
    "description": _s("What the command does, in a few words (shown to the user), e.g. \"List the files\"."),
    "timeoutMs": {"type": "number", "description": "Kill the command after this many milliseconds (the tool "
                                                   "applies its default and its cap)."},
    "workdir": _s("Directory to run in (default: the workspace); relative paths start at the workspace."),
    "run_in_background": {"type": "boolean", "description": "Start it as a background job and return its id at "
                                                          "once (read it with job_output, stop it with job_kill); "
                                                          "no timeout applies."},
    **escalation("command"),
}, ["command", "description"])

JOB_ID = _s("The id the starting tool returned.")

JOB_LIST_PARAMETERS = {"type": "object", "properties": {}}

JOB_OUTPUT_PARAMETERS = _obj({
    "job_id": JOB_ID,
    "wait": {"type": "boolean", "description": "Wait until the job ends or the wait times out (then the job "
                                               "keeps running and the status says running)."},
    "timeout_ms": {"type": "number", "description": "The longest wait in milliseconds, with wait: true (the "
                                                    "tool's default and cap apply)."},
}, ["job_id"])

JOB_KILL_PARAMETERS = _obj({
    "job_id": JOB_ID,
    "reason": _s("Why, in a few words (kept in the log)."),
}, ["job_id"])

TODO_WRITE_PARAMETERS = _obj({
    "todos": {"type": "array", "description": "Every task, in order; this list replaces the previous one.",
              "items": {"type": "object", "additionalProperties": False, "properties": {
                  "content": _s("The task, as a short imperative line."),
                  "status": _s("pending, in_progress or completed.", enum=["pending", "in_progress", "completed"]),
              }, "required": ["content", "status"]}},
}, ["todos"])

STR_REPLACE_EDITOR_PARAMETERS = _obj({
    "command": _s("view, create, str_replace or insert.", enum=["view", "create", "str_replace", "insert"]),
    "path": _s("An absolute path to a file or directory of the workspace."),
    "file_text": _s("create: the new file's content."),
    "insert_line": {"type": "integer", "description": "insert: the line after which new_str goes (0: at the top)."},
    "new_str": _s("str_replace: the replacement (default: nothing); insert: the text to insert."),
    "old_str": _s("str_replace: the exact text to replace; it must occur once."),
    "view_range": {"type": "array", "description": "view: [first, last] lines to show, counting from 1 "
                                                   "(last -1: to the end).", "items": {"type": "integer"}},
}, ["command", "path"])

SKILL_PARAMETERS = _obj({
    "name": _s("The skill's exact name, as the session's skill catalog lists it."),
}, ["name"])

EXIT_PLAN_MODE_PARAMETERS = _obj({
    "plan": _s("The whole plan in markdown; its first line is a # heading naming it."),
}, ["plan"])

READ_IMAGE_PARAMETERS = _obj({
    "file_path": _s("The image file (PNG, JPEG, WebP or GIF); relative paths start at the workspace."),
}, ["file_path"])

# The tools with these parameters carry dsh's names: their bad arguments are told in dsh's words.
DSH_PARAMETER_SCHEMAS = (READ_PARAMETERS, WRITE_PARAMETERS, EDIT_PARAMETERS, GLOB_PARAMETERS, GREP_PARAMETERS,
                         BASH_PARAMETERS, JOB_LIST_PARAMETERS, JOB_OUTPUT_PARAMETERS, JOB_KILL_PARAMETERS,
                         TODO_WRITE_PARAMETERS, STR_REPLACE_EDITOR_PARAMETERS, SKILL_PARAMETERS,
                         EXIT_PLAN_MODE_PARAMETERS, READ_IMAGE_PARAMETERS)
