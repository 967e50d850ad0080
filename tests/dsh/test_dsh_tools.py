"""dsh's tools, differentially: one headless turn of the real dsh against a scripted server on 127.0.0.1
(read a file, edit it, run commands, search, answer) and dshctl's tools on the same files.

The tools dsh offers and dshctl implements must be equal by name and parameter schema (descriptions are
each side's own words), and each call's result text must be equal.
"""
from __future__ import annotations

import asyncio
import json
import shutil

from dshctl.agents.tools.file_tools import FileTools
from dshctl.agents.tools.fsbase import Roots
from dshctl.agents.tools.jobs import job_tools
from dshctl.agents.tools.schemas import (BASH_PARAMETERS, EDIT_PARAMETERS, GLOB_PARAMETERS, GREP_PARAMETERS,
                                         JOB_KILL_PARAMETERS, JOB_LIST_PARAMETERS, JOB_OUTPUT_PARAMETERS,
                                         READ_PARAMETERS, STR_REPLACE_EDITOR_PARAMETERS, TODO_WRITE_PARAMETERS,
                                         WRITE_PARAMETERS)
from dshctl.agents.tools.editor import Editor
from dshctl.agents.tools.search import SearchTools
from dshctl.agents.tools.shell import BashTool, Tool
from dshctl.agents.tools.todo import TodoLists
from tests.agents.dsh_tools_helpers import BASH_CONFIG, FILE_CONFIG, SEARCH_CONFIG, Caller, agent_with
from tests.agents.sse_server import Sse, SseServer, chunk

OURS = {"read": READ_PARAMETERS, "write": WRITE_PARAMETERS, "edit": EDIT_PARAMETERS, "glob": GLOB_PARAMETERS,
        "grep": GREP_PARAMETERS, "bash": BASH_PARAMETERS, "job_list": JOB_LIST_PARAMETERS,
        "job_output": JOB_OUTPUT_PARAMETERS, "job_kill": JOB_KILL_PARAMETERS, "todo_write": TODO_WRITE_PARAMETERS,
        "str_replace_editor": STR_REPLACE_EDITOR_PARAMETERS}

def editor_calls(ws):
    code = f"{ws}/sub/code.py"
    return [
        ("str_replace_editor", {"command": "str_replace", "path": f"{ws}/a.txt", "old_str": "over", "new_str": "x"}),
        ("str_replace_editor", {"command": "view", "path": code}),
        ("str_replace_editor", {"command": "view", "path": code, "view_range": [2, -1]}),
        ("str_replace_editor", {"command": "view", "path": code, "view_range": [5, 9]}),
        ("str_replace_editor", {"command": "view", "path": str(ws)}),
        ("str_replace_editor", {"command": "view", "path": "sub/code.py"}),
        ("str_replace_editor", {"command": "str_replace", "path": code, "old_str": "x = 3", "new_str": "x = 4"}),
        ("str_replace_editor", {"command": "str_replace", "path": code, "old_str": "y = 2", "new_str": "y = 4"}),
        ("str_replace_editor", {"command": "str_replace", "path": code, "old_str": "zzz"}),
        ("str_replace_editor", {"command": "insert", "path": code, "insert_line": 1, "new_str": "# one"}),
        ("str_replace_editor", {"command": "insert", "path": code, "insert_line": 99, "new_str": "# far"}),
        ("str_replace_editor", {"command": "create", "path": code, "file_text": "no"}),
        ("str_replace_editor", {"command": "create", "path": f"{ws}/made/new.md", "file_text": "# new\n"}),
        ("str_replace_editor", {"command": "view", "path": f"{ws}/nothing"}),
        ("str_replace_editor", {"command": "insert", "path": str(ws), "insert_line": 0, "new_str": "x"}),
    ]


CALLS = [
    ("read", {"file_path": "sub/code.py"}),
    ("read", {"file_path": "sub/code.py", "offset": 2, "limit": 1}),
    ("read", {"file_path": "nope.txt"}),
    ("read", {"file_path": "bin.dat"}),
    ("read", {"file_path": "sub"}),
    ("edit", {"file_path": "a.txt", "old_string": "hello", "new_string": "bye"}),
    ("edit", {"file_path": "sub/code.py", "old_string": "x = 1", "new_string": "x = 3"}),
    ("edit", {"file_path": "sub/code.py", "old_string": "zzz", "new_string": "x"}),
    ("edit", {"file_path": "sub/code.py", "old_string": "x = 1", "new_string": "x = 3", "replace_all": True}),
    ("read", {"file_path": "sub/code.py"}),
    ("write", {"file_path": "new/n.txt", "content": "new\n"}),
    ("write", {"file_path": "a.txt", "content": "over\n"}),
    ("glob", {"pattern": "**/*.py"}),
    ("glob", {"pattern": "*.zzz"}),
    ("grep", {"pattern": "x ="}),
    ("grep", {"pattern": "secret"}),
    ("grep", {"pattern": "new", "include": "*.txt"}),
    ("bash", {"command": "echo hi; echo err >&2", "description": "Print two lines"}),
    ("bash", {"command": "exit 3", "description": "Fail"}),
    ("bash", {"command": "pwd", "description": "Where", "workdir": "sub"}),
    ("bash", {"command": "sleep 5", "description": "Sleep", "timeoutMs": 300}),
    ("bash", {"command": "true", "description": "Nothing"}),
    ("todo_write", {"todos": [{"content": "a", "status": "pending"}, {"content": "b", "status": "in_progress"}]}),
    ("job_list", {}),
]


def workspace(root):
    if root.exists():
        shutil.rmtree(root)
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("hello\nworld\n")
    (root / "sub" / "code.py").write_text("x = 1\ny = 2\nx = 1\n")
    (root / "bin.dat").write_bytes(b"bin\0ary")
    (root / ".gitignore").write_text("ignored.txt\n")
    (root / "ignored.txt").write_text("secret\n")
    (root / ".git").mkdir()


class Router(list):
    """The server's script: the title request gets a title, the turn's requests get the next call."""

    def __init__(self, server, calls):
        super().__init__()
        self.server, self.next, self.calls = server, 0, calls

    def __bool__(self):
        return True

    def pop(self, _index=0):
        if not self.server.requests[-1]["body"].get("tools"):
            return Sse([chunk({"role": "assistant", "content": "Title"}), chunk(finish="stop"), "[DONE]"])
        if self.next >= len(self.calls):
            return Sse([chunk({"role": "assistant", "content": "done"}), chunk(finish="stop"), "[DONE]"])
        name, args = self.calls[self.next]
        self.next += 1
        call = {"index": 0, "id": f"call_{self.next}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}
        return Sse([chunk({"role": "assistant", "tool_calls": [call]}), chunk(finish="tool_calls"), "[DONE]"])


def without_descriptions(schema):
    if isinstance(schema, dict):
        return {k: without_descriptions(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [without_descriptions(v) for v in schema]
    return schema


def dsh_turn(real_dsh, tmp_path, ws, calls):
    home = tmp_path / "home"
    with SseServer() as server:
        server.script = Router(server, calls)
        env = real_dsh.env(home, DEEPSEEK_BASE_URL=f"http://127.0.0.1:{server.port}", DEEPSEEK_API_KEY="sk-test",
                           DSH_PERMISSION_MODE="danger-full-access")   # no bubblewrap here: bash runs unconfined
        done = real_dsh.run(home, "--profile", "headless", "--patch", str(real_dsh.no_typert_patch), "Work.",
                            cwd=ws, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        return [r["body"] for r in server.requests if r["body"].get("tools")]


async def our_results(ws, calls):
    bash = BashTool(Roots(None), BASH_CONFIG, ws.parent)
    tools = [*FileTools(Roots(None), FILE_CONFIG).definitions(), *SearchTools(Roots(None), SEARCH_CONFIG).definitions(),
             Tool("bash", "", bash.execute, BASH_PARAMETERS), *job_tools(bash.jobs),
             Tool("todo_write", "", TodoLists().todo_write, TODO_WRITE_PARAMETERS),
             Tool("str_replace_editor", "", Editor(Roots(None), {"maxOutputChars": 16000}).execute,
                  STR_REPLACE_EDITOR_PARAMETERS)]
    ask = Caller(agent_with(ws, tools, session_id=str(ws)))
    return [await ask.text(name, args) for name, args in calls]


def test_tools_match_dsh_by_name_schema_and_result_text(real_dsh, tmp_path):
    ws = tmp_path / "ws"
    workspace(ws)
    calls = CALLS + editor_calls(ws)
    requests = dsh_turn(real_dsh, tmp_path, ws, calls)
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in requests[0]["tools"]}
    for name, parameters in OURS.items():
        assert without_descriptions(parameters) == without_descriptions(offered[name]), name
    messages = requests[-1]["messages"]
    theirs = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert len(theirs) == len(calls)
    assert "[timed out after 300ms]" in theirs["call_21"] and "2: y = 2" in theirs["call_2"]
    workspace(ws)
    ours = asyncio.run(our_results(ws, calls))
    for n, (call, text) in enumerate(zip(calls, ours), 1):
        assert text == theirs[f"call_{n}"], call
