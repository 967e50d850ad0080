"""The shared task board (dsh's ``TeamTaskBoard``): transitions over whole task snapshots, and views.

A task is created ``pending`` and unowned at revision 1 (ids ``task-<n>``, never reused). Every change
is compare-and-set on ``expectedRevision`` and bumps the revision by one. ``claim`` takes a ready
pending task (all blockers completed) for the caller; ``release`` / ``complete`` / ``reopen`` / ``edit``
/ ``set_dependencies`` / ``delete`` need the owner or the Lead; ``reassign`` is the Lead's alone.
``writeScopes`` are advisory path prefixes: overlapping an in-progress task gives a warning, not a lock.
"""
from __future__ import annotations

import re

from .fold import TaskGraphError, TeamState, check_task_graph

GRAPH_CODES = {"missing": "TEAM_TASK_NOT_FOUND", "duplicate": "TEAM_INVALID_ARGUMENT",
               "cycle": "TEAM_TASK_DEPENDENCY_CYCLE"}


class TeamError(RuntimeError):
    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


def required_text(value, field: str, max_length: int) -> str:
    text = (value if isinstance(value, str) else "").strip()
    if not text:
        raise TeamError(f"{field} must be non-empty", "TEAM_INVALID_ARGUMENT")
    if len(text) > max_length:
        raise TeamError(f"{field} exceeds {max_length} characters", "TEAM_INVALID_ARGUMENT")
    return text


def write_scope(value: str) -> str:
    normalized = re.sub(r"/+$", "", re.sub(r"^\./", "", value.replace("\\", "/")))
    segments = normalized.split("/")
    if (not normalized or normalized.startswith("/") or re.match(r"^[a-z]:", normalized, re.I)
            or any(s in ("", ".", "..") for s in segments)):
        raise TeamError(f"invalid workspace-relative write scope {_json(value)}", "TEAM_INVALID_WRITE_SCOPE")
    return normalized


def _json(value) -> str:
    import json
    return json.dumps(value)


def _scopes(values) -> list[str]:
    return list(dict.fromkeys(write_scope(v) for v in values))


def _dependencies(values, state: TeamState, own_id: str | None = None) -> list[str]:
    out: list[str] = []
    for tid in values:
        if tid == own_id:
            raise TeamError("a team task cannot block itself", "TEAM_TASK_DEPENDENCY_CYCLE")
        if tid in out:
            raise TeamError(f'duplicate blocker "{tid}"', "TEAM_INVALID_ARGUMENT")
        task = state.tasks.get(tid)
        if task is None or task["status"] == "deleted":
            raise TeamError(f'blocker task "{tid}" not found', "TEAM_TASK_NOT_FOUND")
        out.append(tid)
    return out


def _checked(state: TeamState, task: dict) -> dict:
    try:
        check_task_graph(state.tasks, task)
    except TaskGraphError as exc:
        raise TeamError(str(exc), GRAPH_CODES[exc.violation]) from None
    return task


def ready(state: TeamState, task: dict) -> bool:
    return all((state.tasks.get(b) or {}).get("status") == "completed" for b in task["blockedBy"])


def create(state: TeamState, request: dict, max_tasks: int) -> dict:
    if sum(1 for t in state.tasks.values() if t["status"] != "deleted") >= max_tasks:
        raise TeamError(f"Team task limit {max_tasks} reached", "TEAM_TASK_LIMIT")
    task = {"id": f"task-{state.next_task}", "revision": 1,
            "subject": required_text(request.get("subject"), "subject", 200),
            "description": required_text(request.get("description"), "description", 16_384),
            "status": "pending", "blockedBy": _dependencies(request.get("blockedBy") or [], state),
            "writeScopes": _scopes(request.get("writeScopes") or [])}
    return _checked(state, task)


def update(state: TeamState, caller_id: str, lead: bool, request: dict, resolve_member) -> dict:
    """The next snapshot of ``request["taskId"]``; ``resolve_member(name) -> id`` for ``reassign``."""
    current = state.tasks.get(request["taskId"])
    if current is None:
        raise TeamError(f'team task "{request["taskId"]}" not found', "TEAM_TASK_NOT_FOUND")
    if current["revision"] != request["expectedRevision"]:
        raise TeamError(f'stale team task "{current["id"]}" revision {request["expectedRevision"]}; current '
                        f'revision is {current["revision"]}', "TEAM_TASK_STALE_REVISION")
    if current["status"] == "deleted":
        raise TeamError(f'team task "{current["id"]}" is deleted', "TEAM_TASK_DELETED")
    if request["action"] not in ("claim", "reassign") and not lead and current.get("ownerId") != caller_id:
        raise TeamError("task mutation requires its owner or Team Lead", "TEAM_TASK_UNAUTHORIZED")
    step = _ACTIONS.get(request["action"])
    if step is None:
        raise TeamError(f'unsupported task action {request["action"]}', "TEAM_INVALID_ARGUMENT")
    following = step(state, current, caller_id, lead, request, resolve_member)
    return _checked(state, {**following, "revision": current["revision"] + 1})


def _unowned(task: dict, status: str) -> dict:
    return {k: v for k, v in {**task, "status": status}.items() if k != "ownerId"}


def _claim(state, current, caller_id, _lead, _request, _resolve):
    if current.get("ownerId") not in (None, caller_id):
        raise TeamError(f'team task "{current["id"]}" is owned by another member', "TEAM_TASK_ALREADY_CLAIMED")
    if current["status"] != "pending" or not ready(state, current):
        raise TeamError(f'team task "{current["id"]}" is not ready to claim', "TEAM_TASK_BLOCKED")
    return {**current, "status": "in_progress", "ownerId": caller_id}


def _needs(status: str, message: str):
    def check(current):
        if current["status"] != status:
            raise TeamError(message, "TEAM_TASK_INVALID_TRANSITION")
    return check


_IN_PROGRESS_RELEASE = _needs("in_progress", "only an in-progress task can be released")
_IN_PROGRESS_COMPLETE = _needs("in_progress", "only an in-progress task can complete")
_COMPLETED_REOPEN = _needs("completed", "only a completed task can reopen")


def _release(_state, current, *_):
    _IN_PROGRESS_RELEASE(current)
    return _unowned(current, "pending")


def _complete(_state, current, *_):
    _IN_PROGRESS_COMPLETE(current)
    return {**current, "status": "completed"}


def _reopen(_state, current, *_):
    _COMPLETED_REOPEN(current)
    return _unowned(current, "pending")


def _edit(_state, current, _caller, _lead, request, _resolve):
    if all(request.get(k) is None for k in ("subject", "description", "writeScopes")):
        raise TeamError("task edit requires subject, description, or write_scopes", "TEAM_INVALID_ARGUMENT")
    out = dict(current)
    if request.get("subject") is not None:
        out["subject"] = required_text(request["subject"], "subject", 200)
    if request.get("description") is not None:
        out["description"] = required_text(request["description"], "description", 16_384)
    if request.get("writeScopes") is not None:
        out["writeScopes"] = _scopes(request["writeScopes"])
    return out


def _set_dependencies(state, current, _caller, _lead, request, _resolve):
    if request.get("blockedBy") is None:
        raise TeamError("set_dependencies requires blocked_by", "TEAM_INVALID_ARGUMENT")
    return {**current, "blockedBy": _dependencies(request["blockedBy"], state, current["id"])}


def _reassign(state, current, _caller, lead, request, resolve):
    if not lead:
        raise TeamError("only the Team Lead can reassign tasks", "TEAM_LEAD_REQUIRED")
    if current["status"] not in ("pending", "in_progress"):
        raise TeamError("only a pending or in-progress task can be reassigned", "TEAM_TASK_INVALID_TRANSITION")
    owner = (request.get("owner") or "").strip()
    if not owner:
        return _unowned(current, "pending")
    if not ready(state, current):
        raise TeamError(f'team task "{current["id"]}" is blocked', "TEAM_TASK_BLOCKED")
    return {**current, "status": "in_progress", "ownerId": resolve(owner)}


def _delete(state, current, *_):
    for task in state.tasks.values():
        if task["status"] != "deleted" and task["id"] != current["id"] and current["id"] in task["blockedBy"]:
            raise TeamError(f'team task "{current["id"]}" still blocks "{task["id"]}"', "TEAM_TASK_HAS_DEPENDENTS")
    return {**current, "status": "deleted"}


_ACTIONS = {"claim": _claim, "release": _release, "edit": _edit, "set_dependencies": _set_dependencies,
            "complete": _complete, "reopen": _reopen, "reassign": _reassign, "delete": _delete}


def _overlap(left: str, right: str) -> bool:
    return left == right or left.startswith(right + "/") or right.startswith(left + "/")


def view(state: TeamState, lead_id: str, task: dict) -> dict:
    """dsh's ``TeamTaskView``, in its key order (the model sees its JSON)."""
    owner = task.get("ownerId")
    owner_name = None if owner is None else "lead" if owner == lead_id else (state.members.get(owner) or {}).get("name")
    warnings = []
    for other in state.tasks.values():
        if other["id"] == task["id"] or other["status"] != "in_progress":
            continue
        if any(_overlap(a, b) for a in task["writeScopes"] for b in other["writeScopes"]):
            warnings.append(f'write scopes overlap with {other["id"]}')
    out = {k: task[k] for k in ("id", "revision", "subject", "description", "status")}
    out.update(blockedBy=list(task["blockedBy"]), writeScopes=list(task["writeScopes"]))
    if owner_name is not None:
        out["ownerName"] = owner_name
    out.update(ready=task["status"] == "pending" and ready(state, task), writeScopeWarnings=warnings)
    return out
