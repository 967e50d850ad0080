"""Replaying a Team Lead's log into its Team (dsh's ``foldTeam``), strictly.

Records are selected by ``teamId`` (the Lead's session id), so Team events a fork inherited from another
root stay out. Every ``team/member`` and ``team/task`` event is a whole snapshot: a member begins
``provisioning`` and moves once to ``active`` or ``failed``, never changing name, provider or context; a
task begins at revision 1 and each later snapshot is the next revision. A message is queued once and
delivered at most once, to the target it was queued for. Each payload has exactly its keys, of their
types and enums, and a message's content blocks are checked as dsh checks them (``content``). A log that breaks these rules is refused
(``TeamLogError``), as dsh refuses it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .content import valid_blocks

TEAM_EVENTS = frozenset({"team/member", "team/task", "team/message/queued", "team/message/delivered"})
TASK_ID = re.compile(r"^task-(\d+)$")


class TeamLogError(ValueError):
    pass


@dataclass
class TeamState:
    id: str
    members: dict = field(default_factory=dict)          # session id -> member snapshot (creation order)
    by_name: dict = field(default_factory=dict)          # name -> session id
    tasks: dict = field(default_factory=dict)            # task id -> task snapshot (creation order)
    messages: dict = field(default_factory=dict)         # message id -> message snapshot
    delivered: set = field(default_factory=set)
    next_task: int = 1

    def pending_messages(self) -> list[dict]:
        return [m for m in self.messages.values() if m["id"] not in self.delivered]


def fold_team(root_id: str, events: list[dict]) -> TeamState:
    state = TeamState(root_id)
    for event in events:
        if event["type"] in TEAM_EVENTS:
            apply_event(state, event)
    return state


_STR, _INT, _LIST = (str,), (int,), (list,)
_NON_EMPTY = frozenset({"id", "ownerId", "senderId", "targetId"})
# The whole shape of each payload (key: (types, required)), as dsh's strict schemas hold them.
_SHAPES = {
    "member": {"id": (_STR, True), "name": (_STR, True), "description": (_STR, True), "provider": (_STR, True),
               "context": (_STR, True), "phase": (_STR, True), "error": (_STR, False)},
    "task": {"id": (_STR, True), "revision": (_INT, True), "subject": (_STR, True), "description": (_STR, True),
             "status": (_STR, True), "ownerId": (_STR, False), "blockedBy": (_LIST, True),
             "writeScopes": (_LIST, True)},
    "message": {"id": (_STR, True), "senderId": (_STR, True), "senderName": (_STR, True),
                "targetId": (_STR, True), "delivery": (_STR, True), "content": (_LIST, True)},
}
_ENUMS = {("member", "context"): {"fresh", "fork"}, ("member", "phase"): {"provisioning", "active", "failed"},
          ("task", "status"): {"pending", "in_progress", "completed", "deleted"},
          ("message", "delivery"): {"quiet", "wakeup"}}
_PAYLOAD = {"team/member": ("member",), "team/task": ("task",), "team/message/queued": ("message",),
            "team/message/delivered": ("messageId", "targetId")}


def _valid(kind: str, value) -> bool:
    shape = _SHAPES[kind]
    if not isinstance(value, dict) or not set(value) <= set(shape):
        return False
    for key, (types, required) in shape.items():
        if key not in value:
            if required:
                return False
            continue
        item = value[key]
        if not isinstance(item, types) or isinstance(item, bool) or (key in _NON_EMPTY and not item):
            return False
        if (kind, key) in _ENUMS and item not in _ENUMS[(kind, key)]:
            return False
    if kind == "task" and (value["revision"] < 1 or not all(isinstance(b, str) and b for b in value["blockedBy"])
                           or not all(isinstance(w, str) for w in value["writeScopes"])):
        return False
    return kind != "message" or valid_blocks(value["content"])


def _check_payload(kind: str, data: dict) -> None:
    keys = _PAYLOAD[kind]
    ok = set(data) == {"version", "teamId", *keys}
    if ok and kind == "team/message/delivered":
        ok = all(isinstance(data[k], str) and data[k] for k in keys)
    elif ok:
        ok = _valid(keys[0], data[keys[0]])
    if not ok:
        raise TeamLogError(f"persisted Agent Teams {kind} payload is invalid")


def apply_event(state: TeamState, event: dict) -> None:
    data = event.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("teamId"), str) or not data["teamId"]:
        raise TeamLogError(f"persisted Agent Teams {event['type']} payload is invalid")
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise TeamLogError(f"persisted Agent Teams {event['type']} payload is invalid")
    if version != 1:
        if data["teamId"] != state.id:
            return
        raise TeamLogError(f"unsupported Agent Teams event version {version}")
    kind = event["type"]
    _check_payload(kind, data)
    if data["teamId"] != state.id:
        return
    if kind == "team/member":
        _member(state, data["member"])
    elif kind == "team/task":
        _task(state, data["task"])
    elif kind == "team/message/queued":
        message = data["message"]
        if message["id"] in state.messages:
            raise TeamLogError(f'team message "{message["id"]}" was queued twice')
        state.messages[message["id"]] = message
    else:
        _delivered(state, data)


def _member(state: TeamState, member: dict) -> None:
    prior = state.members.get(member["id"])
    named = state.by_name.get(member["name"])
    if named is not None and named != member["id"]:
        raise TeamLogError(f'teammate name "{member["name"]}" is reused by another member')
    if prior is None:
        if member["phase"] != "provisioning":
            raise TeamLogError(f'teammate "{member["name"]}" must begin provisioning')
        state.by_name[member["name"]] = member["id"]
    else:
        if any(prior[k] != member[k] for k in ("name", "provider", "context")):
            raise TeamLogError(f'teammate "{member["id"]}" changed immutable identity fields')
        if prior["phase"] != "provisioning" or member["phase"] == "provisioning":
            raise TeamLogError(f'teammate "{member["name"]}" has an invalid {prior["phase"]} -> '
                               f'{member["phase"]} transition')
    state.members[member["id"]] = member


def _task(state: TeamState, task: dict) -> None:
    prior = state.tasks.get(task["id"])
    if prior is None and task["revision"] != 1:
        raise TeamLogError(f'team task "{task["id"]}" must begin at revision 1')
    if prior is not None and task["revision"] != prior["revision"] + 1:
        raise TeamLogError(f'team task "{task["id"]}" revision is not contiguous')
    check_task_graph(state.tasks, task)
    match = TASK_ID.match(task["id"])
    if match:
        state.next_task = max(state.next_task, int(match.group(1)) + 1)
    state.tasks[task["id"]] = task


def _delivered(state: TeamState, data: dict) -> None:
    queued = state.messages.get(data["messageId"])
    if queued is None:
        raise TeamLogError(f'team message "{data["messageId"]}" was delivered before queueing')
    if queued["targetId"] != data["targetId"]:
        raise TeamLogError(f'team message "{data["messageId"]}" target changed')
    if data["messageId"] in state.delivered:
        raise TeamLogError(f'team message "{data["messageId"]}" was delivered twice')
    state.delivered.add(data["messageId"])


class TaskGraphError(TeamLogError):
    def __init__(self, message: str, violation: str):
        super().__init__(message)
        self.violation = violation      # missing | duplicate | cycle


def check_task_graph(current: dict, candidate: dict) -> None:
    """Whether ``candidate`` keeps the graph valid, given that ``current`` is (as every fold and board
    state is): only the candidate's own edges can break it, so only they are walked. A break is then
    worded by the whole-graph check, which names what dsh's check names."""
    if _candidate_breaks(current, candidate):
        check_whole_task_graph(current, candidate)
        raise TaskGraphError(f'team task "{candidate["id"]}" breaks the task graph', "cycle")   # not reached


def _candidate_breaks(current: dict, candidate: dict) -> bool:
    cid = candidate["id"]
    if candidate["status"] == "deleted":
        return any(t["status"] != "deleted" and cid in t["blockedBy"] for tid, t in current.items() if tid != cid)
    blockers = candidate["blockedBy"]
    if cid in blockers or len(set(blockers)) != len(blockers):
        return True
    if any((current.get(b) or {"status": "deleted"})["status"] == "deleted" for b in blockers):
        return True
    seen, todo = set(), list(blockers)
    while todo:                         # a new cycle must come back to the candidate
        tid = todo.pop()
        if tid == cid:
            return True
        if tid not in seen:
            seen.add(tid)
            todo.extend(current[tid]["blockedBy"] if tid in current else ())
    return False


def check_whole_task_graph(current: dict, candidate: dict) -> None:
    """The live tasks (all but ``deleted``) name live blockers, none twice, and form no cycle."""
    tasks = {**current, candidate["id"]: candidate}
    live = {tid: t for tid, t in tasks.items() if t["status"] != "deleted"}
    for task in live.values():
        seen = set()
        for blocker in task["blockedBy"]:
            if blocker == task["id"]:
                raise TaskGraphError(f'team task "{task["id"]}" cannot block itself', "cycle")
            if blocker in seen:
                raise TaskGraphError(f'team task "{task["id"]}" repeats blocker "{blocker}"', "duplicate")
            if blocker not in live:
                raise TaskGraphError(f'blocker task "{blocker}" for "{task["id"]}" is missing or deleted', "missing")
            seen.add(blocker)
    done, visiting = set(), set()

    def visit(tid: str) -> None:
        if tid in visiting:
            raise TaskGraphError(f'task dependency cycle includes "{tid}"', "cycle")
        if tid in done or tid not in live:
            return
        visiting.add(tid)
        for blocker in live[tid]["blockedBy"]:
            visit(blocker)
        visiting.discard(tid)
        done.add(tid)
    for tid in live:
        visit(tid)
