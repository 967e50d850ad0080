"""Replaying a Team Lead's log into its Team (dsh's ``foldTeam``), strictly.

Records are selected by ``teamId`` (the Lead's session id), so Team events a fork inherited from another
root stay out. Every ``team/member`` and ``team/task`` event is a whole snapshot: a member begins
``provisioning`` and moves once to ``active`` or ``failed``, never changing name, provider or context; a
task begins at revision 1 and each later snapshot is the next revision. A message is queued once and
delivered at most once, to the target it was queued for. A log that breaks these rules is refused
(``TeamLogError``), as dsh refuses it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

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


def apply_event(state: TeamState, event: dict) -> None:
    data = event.get("data") or {}
    if data.get("teamId") != state.id:
        return
    if data.get("version") != 1:
        raise TeamLogError(f"unsupported Agent Teams event version {data.get('version')}")
    kind = event["type"]
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
