"""The Agent Teams model tools, by dsh's names and parameters (``schemas``); each answers with the JSON
of dsh's result value (compact, in dsh's key order), or ``Error: <message>``."""
from __future__ import annotations

import json

from dshctl.agents.tools.definition import Tool, error_result, text_result

from .board import TeamError
from .schemas import TEAM_TOOL_PARAMETERS

NO_ACTIVE_PEER = ("No other Team member is running or provisioning. wait_agent cannot make progress or wake "
                  "inactive teammates. Re-list with list_agents and team_task_list, then use followup_task to "
                  "wake each required inactive teammate before waiting again.")
DESCRIPTIONS = {
    "spawn_teammate": "Create a named, durable teammate (Team Lead only).",
    "send_message": "Tell a Team member something without starting it if it is idle.",
    "followup_task": "Give a Team member more work; it starts a turn if it is not running.",
    "list_agents": "The Lead and every teammate, with their current status.",
    "wait_agent": "Wait for the next change of a member's status, the mailbox or the task board.",
    "interrupt_agent": "Stop a teammate's current turn; its queued messages stay (Team Lead only).",
    "team_task_create": "Add an unowned pending task to the shared board.",
    "team_task_list": "The shared tasks with owner, revision, readiness and blockers.",
    "team_task_get": "One shared task as it is now.",
    "team_task_update": "Change a task (claim, complete, ...) given the revision you last read.",
}


def _json(value) -> dict:
    return text_result(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def _text(message: str) -> list[dict]:
    return [{"type": "text", "text": message}]


class TeamTools:
    def __init__(self, ctx, config: dict):
        self.ctx, self.config = ctx, config

    @property
    def teams(self):
        return self.ctx.agentTeams

    async def spawn_teammate(self, args, run):
        context = args.get("context") or "fresh"
        provider = self.config["forkProvider"] if context == "fork" else self.config["freshProvider"]
        return await self.teams.spawn_teammate(run.agent, {"name": args["name"], "description": args["description"],
                                                           "prompt": _text(args["prompt"]), "context": context,
                                                           "provider": provider})

    def message(self, delivery: str):
        async def send(args, run):
            return await self.teams.send_message(run.agent, {"target": args["target"], "delivery": delivery,
                                                             "content": _text(args["message"])})
        return send

    def list_agents(self, _args, run):
        return self.teams.list_members(run.agent)

    async def wait_agent(self, args, run):
        timeout = args.get("timeout_ms", 30_000)
        if isinstance(timeout, int) and 10_000 <= timeout <= 3_600_000:
            others = [m for m in self.teams.list_members(run.agent)
                      if m["id"] != run.agent.id and m["status"] in ("running", "provisioning")]
            if not others:
                return {"timedOut": False, "noProgress": {"reason": "no-active-peer", "message": NO_ACTIVE_PEER}}
        return await self.teams.wait_for_change(run.agent, timeout)

    def interrupt_agent(self, args, run):
        return self.teams.interrupt(run.agent, args["target"])

    async def team_task_create(self, args, run):
        return await self.teams.create_task(run.agent, {"subject": args["subject"], "description": args["description"],
                                                        "blockedBy": args.get("blocked_by"),
                                                        "writeScopes": args.get("write_scopes")})

    def team_task_list(self, args, run):
        owner, status, ready = args.get("owner"), args.get("status"), args.get("ready")
        rows = [t for t in self.teams.list_tasks(run.agent)
                if (status is None or t["status"] == status) and (ready is None or t["ready"] == ready)
                and (owner is None or (t.get("ownerName") is None if owner == "unowned" else t.get("ownerName") == owner))]
        cursor, limit = args.get("cursor", 0), args.get("limit", 50)
        if not isinstance(cursor, int) or cursor < 0:
            raise TeamError("cursor must be a non-negative safe integer", "TEAM_INVALID_ARGUMENT")
        if not isinstance(limit, int) or not 1 <= limit <= 100:
            raise TeamError("limit must be an integer from 1 through 100", "TEAM_INVALID_ARGUMENT")
        out = {"tasks": rows[cursor:cursor + limit]}
        if cursor + limit < len(rows):
            out["nextCursor"] = cursor + limit
        return out

    def team_task_get(self, args, run):
        return self.teams.get_task(run.agent, args["task_id"])

    async def team_task_update(self, args, run):
        request = {"taskId": args["task_id"], "expectedRevision": args["expected_revision"], "action": args["action"]}
        for ours, theirs in (("subject", "subject"), ("description", "description"), ("blockedBy", "blocked_by"),
                             ("writeScopes", "write_scopes"), ("owner", "owner")):
            if args.get(theirs) is not None:
                request[ours] = args[theirs]
        return await self.teams.update_task(run.agent, request)

    def tools(self) -> list[Tool]:
        handlers = {"spawn_teammate": self.spawn_teammate, "send_message": self.message("quiet"),
                    "followup_task": self.message("wakeup"), "list_agents": self.list_agents,
                    "wait_agent": self.wait_agent, "interrupt_agent": self.interrupt_agent,
                    "team_task_create": self.team_task_create, "team_task_list": self.team_task_list,
                    "team_task_get": self.team_task_get, "team_task_update": self.team_task_update}
        member = self.visible_to    # ordinary sub-agents and other non-members never see these tools
        return [Tool(name, DESCRIPTIONS[name], _answering(handler), TEAM_TOOL_PARAMETERS[name], dsh_arguments=True,
                     is_concurrency_safe=(lambda _a: True) if name in ("list_agents", "team_task_list",
                                                                      "team_task_get") else None,
                     visible_to=member)
                for name, handler in handlers.items()]

    def visible_to(self, agent) -> bool:
        teams = self.ctx.get("agentTeams")
        return teams is not None and teams.try_membership(agent) is not None


def _answering(handler):
    async def execute(args, run):
        if run.agent is None or getattr(run.agent, "session", None) is None:
            return error_result("Agent Teams tools require a calling agent", "TEAM_NOT_MEMBER")
        try:
            value = handler(args, run)
            if hasattr(value, "__await__"):
                value = await value
        except TeamError as exc:
            return error_result(str(exc), exc.code)
        except Exception as exc:  # noqa: BLE001 - e.g. a sub-agent refusal while spawning: the model sees it
            return error_result(str(exc), getattr(exc, "code", None) or "TEAM_FAILED")
        return _json(value)
    return execute
