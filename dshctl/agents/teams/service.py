"""``ctx.agentTeams`` (dsh's ``TeamService``): the implicit Team rooted at a top-level session.

Any live root agent is a Team Lead (its Team id is its session id); a teammate is a continuable child
of the Lead that the Lead's log lists in ``team/member``. Ordinary sub-agents (a descriptor, no roster
entry) are not members. Every change is appended to the Lead's log and committed before it is
announced; Team state is always the fold of that log, so after a restart it is read back as it was.
Operations on one Team are serialized (one lock per Lead), as dsh's journal serializes them.
"""
from __future__ import annotations

import asyncio
import re
import uuid

from dshctl.agents.subagents import descriptor as descriptors

from . import board
from .board import TeamError, required_text
from .fold import TEAM_EVENTS, TeamState, apply_event
from .mailbox import Mailbox

MEMBER_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
DEFAULTS = {"maxMembers": 8, "maxTasks": 256, "maxPendingMessagesPerMember": 64, "maxMessageBytes": 65_536,
            "disposalTimeoutMs": 5_000}


class TeamService:
    def __init__(self, ctx, config: dict):
        self.ctx = ctx
        self.config = {k: config.get(k, v) for k, v in DEFAULTS.items()}
        self.locks: dict[str, asyncio.Lock] = {}
        self.changes: dict[str, asyncio.Event] = {}     # team id -> set on its next change
        self.recovering: dict[str, asyncio.Task] = {}   # lead id -> its one recovery pass
        self.mailbox = Mailbox(self)
        self.folds: dict[str, tuple] = {}                # lead id -> (log length, events, TeamState)
        self.creating: set[str] = set()                  # member ids whose spawn is under way here
        self.admitted: set[asyncio.Task] = set()         # spawns and sends admitted before disposal
        self.closed = False                              # the row is being unloaded or reloaded
        ctx.on("agent/status", self._on_status)

    # ---- journal -------------------------------------------------------------------------------
    def state(self, root):
        """The Team folded from the Lead's log. The log only grows, so the fold is kept per Lead and
        only the events appended since the last call are applied (dsh refolds the whole log on every
        call). Callers never mutate it: every change is a new event."""
        events = root.session.events
        cached = self.folds.get(root.id)
        if cached is None or cached[1] is not events or cached[0] > len(events):
            cached = (0, events, TeamState(root.id))
        done, _, state = cached
        try:
            for event in events[done:]:
                if event["type"] in TEAM_EVENTS:
                    apply_event(state, event)
        except Exception:
            self.folds.pop(root.id, None)   # a refused log is refused again on the next read
            raise
        self.folds[root.id] = (len(events), events, state)
        return state

    def lock(self, root) -> asyncio.Lock:
        return self.locks.setdefault(root.id, asyncio.Lock())

    def commit(self, root, kind: str, data: dict) -> None:
        root.session.append(kind, {"version": 1, "teamId": root.id, **data})
        root.session.commit()
        self.notify(root.id)

    def notify(self, team_id: str) -> None:
        event = self.changes.pop(team_id, None)
        if event is not None:
            event.set()

    # ---- membership ----------------------------------------------------------------------------
    def try_membership(self, agent) -> dict | None:
        if agent is None or self.ctx.agents.get(agent.id) is not agent:
            return None
        header = agent.session.header or {}
        root = self.ctx.agents.get(header["parentSession"]) if header.get("parentSession") else None
        if root is not None:
            member = self.state(root).members.get(agent.id)
            if member is not None and member["phase"] in ("active", "provisioning"):
                return {"root": root, "id": root.id, "role": "teammate", "name": member["name"]}
        if descriptors.fold(agent.session.events[int(header.get("seedLength") or 0):]) is not None:
            return None     # a provider-owned sub-agent is no Team's member, nor a Lead
        return {"root": agent, "id": agent.id, "role": "lead", "name": "lead"}

    def membership(self, agent) -> dict:
        found = self.try_membership(agent)
        if found is None:
            raise TeamError(f'agent "{getattr(agent, "id", None)}" is not a member of an active Agent Team',
                            "TEAM_NOT_MEMBER")
        self.schedule_recovery(found["root"])
        return found

    def resolve_active(self, root, state, raw: str) -> tuple[str, str]:
        name = (raw or "").strip()
        if name == "lead":
            return root.id, name
        member = state.members.get(state.by_name.get(name, ""))
        if member is None or member["phase"] != "active":
            raise TeamError(f'active teammate "{name}" not found', "TEAM_MEMBER_NOT_FOUND")
        return member["id"], name

    def model_of(self, agent) -> str | None:
        llm = self.ctx.get("llm")
        return (agent.options or {}).get("model") or getattr(llm, "model", None)

    def list_members(self, agent) -> list[dict]:
        root = self.membership(agent)["root"]
        rows = [{"id": root.id, "name": "lead", "role": "lead", "status": root.status,
                 **_present("model", self.model_of(root)), "diagnostics": []}]
        for member in self.state(root).members.values():
            live = self.ctx.agents.get(member["id"])
            status = {"failed": "failed", "provisioning": "provisioning"}.get(
                member["phase"], live.status if live is not None else "inactive")
            rows.append({"id": member["id"], "name": member["name"], "role": "teammate", "status": status,
                         "description": member["description"], "provider": member["provider"],
                         "context": member["context"], **_present("model", self.model_of(live or root)),
                         "diagnostics": [member["error"]] if member.get("error") else []})
        return rows

    # ---- roster --------------------------------------------------------------------------------
    async def spawn_teammate(self, caller, request: dict) -> dict:
        return await self._admit(self._spawn(caller, request))

    async def _spawn(self, caller, request: dict) -> dict:
        found = self.membership(caller)
        if found["role"] != "lead":
            raise TeamError("only the Team Lead can create teammates", "TEAM_LEAD_REQUIRED")
        root, name = found["root"], request.get("name") or ""
        if not MEMBER_NAME.match(name) or len(name) > 64 or name == "lead":
            raise TeamError('teammate name must be lower-kebab-case, at most 64 characters, and not "lead"',
                            "TEAM_INVALID_MEMBER_NAME")
        member = {"id": str(uuid.uuid4()), "name": name,
                  "description": required_text(request.get("description"), "description", 200),
                  "provider": required_text(request.get("provider"), "provider", 200),
                  "context": request.get("context") or "fresh", "phase": "provisioning"}
        async with self.lock(root):
            state = self.state(root)
            if name in state.by_name:
                raise TeamError(f'teammate name "{name}" was already used in this Team', "TEAM_MEMBER_NAME_TAKEN")
            if len(state.members) >= self.config["maxMembers"]:
                raise TeamError(f'Team member limit {self.config["maxMembers"]} reached', "TEAM_MEMBER_LIMIT")
            self.creating.add(member["id"])         # the recovery pass leaves it to this call
            self.commit(root, "team/member", {"member": member})
        try:
            await self.ctx.subagents.start_continuable({
                "provider": member["provider"], "label": member["description"], "childId": member["id"],
                "request": {"prompt": request["prompt"], "parent": root}})
        except Exception as exc:    # a cancelled spawn stays provisioning: recovery decides from the log
            await self.settle_member(root, {**member, "phase": "failed", "error": str(exc)})
            raise
        finally:
            self.creating.discard(member["id"])
        active = {**member, "phase": "active"}
        await self.settle_member(root, active)
        live = self.ctx.agents.get(member["id"])
        return {"member": {"id": member["id"], "name": name, "role": "teammate",
                           "status": live.status if live is not None else "inactive",
                           "description": member["description"], "provider": member["provider"],
                           "context": member["context"], **_present("model", self.model_of(live or root)),
                           "diagnostics": []}}

    async def settle_member(self, root, terminal: dict) -> None:
        async with self.lock(root):
            current = self.state(root).members.get(terminal["id"])
            if current is not None and current["phase"] == "provisioning":
                self.commit(root, "team/member", {"member": terminal})

    def interrupt(self, caller, target_name: str) -> dict:
        found = self.membership(caller)
        if found["role"] != "lead":
            raise TeamError("only the Team Lead can interrupt teammates", "TEAM_LEAD_REQUIRED")
        target_id, _ = self.resolve_active(found["root"], self.state(found["root"]), target_name)
        if target_id == found["root"].id:
            raise TeamError("the Team Lead cannot interrupt itself", "TEAM_INVALID_TARGET")
        live = self.ctx.agents.get(target_id)
        if live is None:
            return {"previousStatus": "inactive"}
        previous = live.status
        self.ctx.subagents.interrupt(target_id, {"kind": "ancestor", "agent": caller})
        return {"previousStatus": previous}

    # ---- task board ----------------------------------------------------------------------------
    async def create_task(self, caller, request: dict) -> dict:
        root = self.membership(caller)["root"]
        async with self.lock(root):
            state = self.state(root)
            task = board.create(state, request, self.config["maxTasks"])
            self.commit(root, "team/task", {"task": task})
            return board.view(state, root.id, task)

    def get_task(self, caller, task_id: str) -> dict:
        root = self.membership(caller)["root"]
        state = self.state(root)
        task = state.tasks.get(task_id)
        if task is None:
            raise TeamError(f'team task "{task_id}" not found', "TEAM_TASK_NOT_FOUND")
        return board.view(state, root.id, task)

    def list_tasks(self, caller) -> list[dict]:
        root = self.membership(caller)["root"]
        state = self.state(root)
        return [board.view(state, root.id, t) for t in state.tasks.values() if t["status"] != "deleted"]

    async def update_task(self, caller, request: dict) -> dict:
        found = self.membership(caller)
        root = found["root"]
        async with self.lock(root):
            state = self.state(root)
            task = board.update(state, caller.id, found["role"] == "lead", request,
                                lambda name: self.resolve_active(root, state, name)[0])
            self.commit(root, "team/task", {"task": task})
            return board.view(state, root.id, task)

    # ---- mailbox and activity ------------------------------------------------------------------
    async def send_message(self, caller, request: dict) -> dict:
        return await self._admit(self.mailbox.send(self.membership(caller), caller, request))

    async def wait_for_change(self, caller, timeout_ms) -> dict:
        team_id = self.membership(caller)["id"]
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or not 10_000 <= timeout_ms <= 3_600_000:
            raise TeamError("timeout_ms must be an integer from 10000 through 3600000", "TEAM_INVALID_ARGUMENT")
        event = self.changes.setdefault(team_id, asyncio.Event())
        try:
            await asyncio.wait_for(event.wait(), timeout_ms / 1000)
        except asyncio.TimeoutError:
            return {"timedOut": True}
        return {"timedOut": False}

    def _on_status(self, payload: dict) -> None:
        found = self.try_membership(payload.get("agent"))
        if found is not None:
            self.notify(found["id"])
            self.schedule_recovery(found["root"])

    def schedule_recovery(self, root) -> None:
        """Once per Lead and process: settle provisioning members, retry undelivered mail."""
        if root.id not in self.recovering and not self.closed:
            self.recovering[root.id] = asyncio.ensure_future(self.mailbox.recover(root))

    # ---- unloading ------------------------------------------------------------------------------
    async def _admit(self, operation):
        if self.closed:
            operation.close()
            raise TeamError("Agent Teams service is disposing", "TEAM_DISPOSED")
        task = asyncio.ensure_future(operation)
        self.admitted.add(task)
        task.add_done_callback(self.admitted.discard)
        return await task

    async def drain(self) -> None:
        """The row is unloaded, or reloaded with another config (dsh's ``disposeRuntime``): admission
        closes, recovery passes stop, admitted spawns and sends finish, then every live teammate is
        stopped through ``drainContinuableChildren``. Each settles ``aborted`` and its Lead receives
        the usual settlement notice; roster, board and mailbox stay in the Lead's log for the next
        service. Each wait is bounded by ``disposalTimeoutMs``."""
        self.closed = True
        recovering = list(self.recovering.values())
        for task in recovering:
            task.cancel()
        await asyncio.gather(*recovering, return_exceptions=True)
        limit = self.config["disposalTimeoutMs"] / 1000
        if self.admitted:
            await asyncio.wait(list(self.admitted), timeout=limit)
        for root, child_ids in self.live_teammates().items():
            await asyncio.wait_for(self.ctx.subagents.drain_continuable_children(root, child_ids), limit)

    def live_teammates(self) -> dict:
        """Each live Lead with the ids of its live roster children."""
        out: dict = {}
        for agent in list(self.ctx.agents.live.values()):
            root_id = (agent.session.header or {}).get("parentSession")
            root = self.ctx.agents.get(root_id) if root_id else None
            try:
                member = root is not None and agent.id in self.state(root).members
            except Exception:  # noqa: BLE001 - a Lead whose log is refused has no roster to stop
                member = False
            if member:
                out.setdefault(root, []).append(agent.id)
        return out


def _present(key: str, value) -> dict:
    return {} if value is None else {key: value}
