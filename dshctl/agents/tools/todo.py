"""``@dshctl/tool-todo``: dsh's ``todo_write`` tool, the session's task list (the whole list each call).

The list is kept per session in memory (the log keeps every call, so a resumed session's last
``todo_write`` call is its list); the result text is dsh's ``Updated todo list: P pending, I in progress,
C completed.``
"""
from __future__ import annotations

from .definition import Tool, text_result
from .fsbase import session_key
from .schemas import TODO_WRITE_PARAMETERS

name = "@dshctl/tool-todo"
inject = ["tools"]
schema = {"type": "object", "default": {}}


class TodoLists:
    def __init__(self):
        self.lists: dict[str, list[dict]] = {}

    async def todo_write(self, args, run):
        todos = [dict(t) for t in args["todos"]]
        self.lists[session_key(run)] = todos
        count = {s: sum(1 for t in todos if t["status"] == s) for s in ("pending", "in_progress", "completed")}
        return text_result(f"Updated todo list: {count['pending']} pending, {count['in_progress']} in progress, "
                           f"{count['completed']} completed.")


def apply(ctx, config):
    lists = TodoLists()
    tool = Tool("todo_write", "Replace the session's task list with the given one (every task, each pending, "
                "in_progress or completed).", lists.todo_write, TODO_WRITE_PARAMETERS)
    ctx.tools.register(ctx, tool.name, tool, ctx.get("toolScope") or "global")
