"""The task board's algorithms, by property: the dependency check refuses exactly the graphs that have a
cycle (against a topological sort), and any sequence of board commands by any members either fails with
a TeamError or yields snapshots whose strict replay (``fold_team``) is the state the commands built."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.agents.teams import board
from dshctl.agents.teams.board import TeamError
from dshctl.agents.teams.fold import (TaskGraphError, TeamLogError, TeamState, apply_event, check_task_graph,
                                      check_whole_task_graph, fold_team)

LEAD, ALPHA, BETA = "lead-session", "alpha-id", "beta-id"


def has_cycle(edges: dict[str, list[str]]) -> bool:
    indegree = {n: 0 for n in edges}
    for blockers in edges.values():
        for b in blockers:
            indegree[b] += 1
    ready = [n for n, d in indegree.items() if d == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for b in edges[node]:
            indegree[b] -= 1
            if indegree[b] == 0:
                ready.append(b)
    return seen != len(edges)


@st.composite
def graphs(draw):
    """A valid current graph (each task blocked by earlier ones, or by the last task) and the last
    task's new blockers, anything at all: only those can close a cycle."""
    n = draw(st.integers(1, 7))
    ids = [f"task-{i}" for i in range(1, n + 1)]
    last = ids[-1]
    edges = {tid: sorted(draw(st.sets(st.sampled_from([*ids[:i], last])))) if i < n - 1 or tid != last else []
             for i, tid in enumerate(ids)}
    edges[last] = sorted(draw(st.sets(st.sampled_from(ids))))
    return edges


def snapshot(tid: str, blockers: list[str]) -> dict:
    return {"id": tid, "revision": 1, "subject": "s", "description": "d", "status": "pending",
            "blockedBy": blockers, "writeScopes": []}


def refusal(check, current, candidate):
    try:
        check(current, candidate)
    except TaskGraphError as exc:
        return exc.violation, str(exc)
    return None


@settings(max_examples=400, deadline=None)
@given(graphs(), st.booleans())
def test_the_dependency_check_refuses_exactly_the_cyclic_graphs(edges, delete_last):
    *rest, last = edges
    # a valid state: the last task's prior revision blocks on nothing (graphs() keeps the rest acyclic)
    current = {**{tid: snapshot(tid, edges[tid]) for tid in rest}, last: snapshot(last, [])}
    assert not has_cycle({**{tid: edges[tid] for tid in rest}, last: []})
    candidate = dict(snapshot(last, edges[last]), revision=2)
    if delete_last:
        candidate = dict(snapshot(last, []), revision=2, status="deleted")
    quick, whole = refusal(check_task_graph, current, candidate), refusal(check_whole_task_graph, current, candidate)
    assert quick == whole                # the same verdict and the same words as the whole-graph check
    if delete_last:
        assert (whole is not None) == any(last in edges[tid] for tid in rest)
    else:
        assert (whole is not None) == has_cycle(edges)
        assert whole is None or whole[0] == "cycle"


ACTIONS = st.sampled_from(["claim", "release", "complete", "reopen", "reassign", "delete", "set_dependencies",
                           "edit"])
CALLERS = st.sampled_from([LEAD, LEAD, ALPHA, BETA])
COMMANDS = st.lists(st.one_of(
    st.tuples(st.just("create"), CALLERS, st.lists(st.integers(1, 4), max_size=2)),
    *[st.tuples(ACTIONS, CALLERS, st.integers(1, 4), st.integers(0, 3),
                st.sampled_from(["", "alpha", "beta", "lead", "ghost"]), st.lists(st.integers(1, 4), max_size=2))] * 3,
), max_size=50)


def team_with_members() -> tuple[TeamState, list[dict]]:
    events = [{"type": "team/member", "data": {"version": 1, "teamId": LEAD, "member": {
        "id": mid, "name": name, "description": "d", "provider": "spawn", "context": "fresh", "phase": phase}}}
        for mid, name in ((ALPHA, "alpha"), (BETA, "beta")) for phase in ("provisioning", "active")]
    return fold_team(LEAD, events), events


@settings(max_examples=200, deadline=None)
@given(COMMANDS)
def test_board_commands_replay_strictly_into_the_state_they_built(commands):
    state, events = team_with_members()
    for command in [("create", LEAD, []), ("create", ALPHA, []), ("create", BETA, [1]), *commands]:
        caller = command[1]
        try:
            if command[0] == "create":
                task = board.create(state, {"subject": "s", "description": "d",
                                            "blockedBy": [f"task-{n}" for n in command[2]]}, max_tasks=5)
            else:
                action, _, n, rev_delta, owner, blockers = command
                current = state.tasks.get(f"task-{n}")
                revision = (current["revision"] if current else 1) + (1 if rev_delta == 3 else 0)   # now and then stale
                task = board.update(state, caller, caller == LEAD, {
                    "taskId": f"task-{n}", "expectedRevision": revision, "action": action, "owner": owner,
                    "blockedBy": [f"task-{b}" for b in blockers], "subject": "edited"},
                    lambda name: {"alpha": ALPHA, "beta": BETA, "lead": LEAD}.get(name) or _missing(name))
        except TeamError:
            continue
        event = {"type": "team/task", "data": {"version": 1, "teamId": LEAD, "task": task}}
        apply_event(state, event)       # strict: raises if the board produced an impossible snapshot
        events.append(event)
        if task["status"] == "in_progress":
            assert task.get("ownerId") in (LEAD, ALPHA, BETA)
        if task["status"] == "pending":
            assert "ownerId" not in task or task["ownerId"] in (LEAD, ALPHA, BETA)
    replayed = fold_team(LEAD, events)
    assert replayed.tasks == state.tasks and replayed.next_task == state.next_task
    for task in replayed.tasks.values():
        view = board.view(replayed, LEAD, task)
        assert view["ready"] == (task["status"] == "pending" and board.ready(replayed, task))


def _missing(name):
    raise TeamError(f'active teammate "{name}" not found', "TEAM_MEMBER_NOT_FOUND")


def test_a_revision_gap_or_a_foreign_team_is_handled_as_dsh_handles_it():
    state, events = team_with_members()
    first = board.create(state, {"subject": "s", "description": "d"}, max_tasks=5)
    gap = dict(first, revision=3)
    with pytest.raises(TeamLogError, match="revision is not contiguous"):
        fold_team(LEAD, [*events, *(({"type": "team/task", "data": {"version": 1, "teamId": LEAD, "task": t}})
                                     for t in (first, gap))])
    foreign = {"type": "team/task", "data": {"version": 1, "teamId": "another-root", "task": gap}}
    assert fold_team(LEAD, [*events, foreign]).tasks == {}      # inherited by a fork: not this Team's


@pytest.mark.parametrize("change", [
    lambda t: {**t, "colour": "red"},                 # an unknown key
    lambda t: {**t, "revision": "1"},                 # a wrong type
    lambda t: {**t, "status": "done"},                # not one of the statuses
    lambda t: {k: v for k, v in t.items() if k != "subject"},   # a key missing
    lambda t: {**t, "ownerId": ""},                   # an empty id
])
def test_a_payload_off_its_shape_is_refused(change):
    state, events = team_with_members()
    task = change(board.create(state, {"subject": "s", "description": "d"}, max_tasks=5))
    with pytest.raises(TeamLogError, match="persisted Agent Teams team/task payload is invalid"):
        fold_team(LEAD, [*events, {"type": "team/task", "data": {"version": 1, "teamId": LEAD, "task": task}}])
