"""The parameter schemas of dsh's Agent Teams tools (names, types, enums, required keys as dsh's
``tool-agent-team`` declares them; the descriptions are ours)."""
from __future__ import annotations


def _s(description: str, **more) -> dict:
    return {"type": "string", "description": description, **more}


def _list(description: str) -> dict:
    return {"type": "array", "description": description, "items": {"type": "string"}}


def _object(properties: dict, required: list[str] | None = None) -> dict:
    out = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


MESSAGE = _object({"target": _s("A member's name, or lead."),
                   "message": _s("The whole message; the reader sees nothing else of yours.")}, ["target", "message"])
ACTIONS = ["claim", "release", "edit", "set_dependencies", "complete", "reopen", "reassign", "delete"]

TEAM_TOOL_PARAMETERS = {
    "spawn_teammate": _object({
        "name": _s("The teammate's name: lower-kebab-case, unique in this Team for good."),
        "description": _s("What the teammate is responsible for, in a few words."),
        "prompt": _s("The teammate's first task, complete."),
        "context": _s("fresh (the default): no Lead history; fork: the Lead's completed turns.",
                      enum=["fresh", "fork"])}, ["name", "description", "prompt"]),
    "send_message": MESSAGE,
    "followup_task": MESSAGE,
    "list_agents": _object({}),
    "wait_agent": _object({"timeout_ms": {"type": "integer",
                                          "description": "How long to wait, 10000 to 3600000 ms (default 30000)."}}),
    "interrupt_agent": _object({"target": _s("The teammate's name.")}, ["target"]),
    "team_task_create": _object({
        "subject": _s("A short title."),
        "description": _s("What to do and when it counts as done."),
        "blocked_by": _list("Ids of tasks that must be completed first."),
        "write_scopes": _list("Workspace-relative paths this task expects to change (advisory).")},
        ["subject", "description"]),
    "team_task_list": _object({
        "status": _s("Only tasks in this status.", enum=["pending", "in_progress", "completed"]),
        "owner": _s("Only tasks of this member; unowned for tasks nobody holds."),
        "ready": {"type": "boolean", "description": "Only tasks that are (or are not) ready to claim."},
        "cursor": {"type": "integer", "description": "Offset of the first row (default 0)."},
        "limit": {"type": "integer", "description": "Rows to return, 1 to 100 (default 50)."}}),
    "team_task_get": _object({"task_id": _s("The task's id.")}, ["task_id"]),
    "team_task_update": _object({
        "task_id": _s("The task's id."),
        "expected_revision": {"type": "integer", "description": "The revision you last read (compare-and-set)."},
        "action": _s("The change to make.", enum=ACTIONS),
        "subject": _s("edit: the new title."),
        "description": _s("edit: the new details."),
        "blocked_by": _list("set_dependencies: the whole new blocker list."),
        "write_scopes": _list("edit: the new write scopes."),
        "owner": _s("reassign (Lead only): the new owner's name; leave out to unassign.")},
        ["task_id", "expected_revision", "action"]),
}
