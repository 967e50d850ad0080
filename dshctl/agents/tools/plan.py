"""``@dshctl/plan-mode``: dsh's plan mode and its ``exit_plan_mode`` tool.

A session is in plan mode when the last ``plan/mode`` event of its log says ``{"active": true}`` (dsh's
event; a resumed session keeps its mode). The mode is switched by ``ctx.planMode.set(agent, active)`` or a
user message ``/plan`` (``/plan off`` leaves; ``/plan TEXT`` enters and keeps ``TEXT`` as the message); a
switch asked for while a turn runs applies at the next step, as dsh's. While active, the row's ``section``
(the planning rules) joins the runtime-context snapshot the model reads (``plan:policy``, before the
sandbox and approval sections, as dsh orders them). The tool list stays the same in both modes.

``exit_plan_mode {plan}`` asks whoever drives the agent (``agent.ask_user``, as ``ask_user_question``)
to approve the plan; on approval the session leaves plan mode from the next step and the result is dsh's
``Plan approved — …`` line, otherwise the model reads the user's feedback as an error result (dsh's texts).
"""
from __future__ import annotations

import re

from .definition import Tool, error_result, text_result
from .schemas import EXIT_PLAN_MODE_PARAMETERS

name = "@dshctl/plan-mode"
inject = ["tools"]
DEFAULT_SECTION = (
    "Plan mode is on: work out a plan, do not carry it out. Read, search and run checks that change nothing; "
    "do not edit or write files or run anything that changes the workspace. Ask the user only what reading "
    "the code cannot answer. When the plan is complete (goal, changes by area, edge cases, tests), call "
    "exit_plan_mode with it as markdown starting with a # title, as the last call of that step; the plan "
    "is carried out only after the user approves it.")
schema = {"type": "object", "default": {}, "additionalProperties": False, "properties": {
    "section": {"type": "string", "minLength": 1, "pattern": r"\S", "default": DEFAULT_SECTION},
}}

APPROVE, KEEP_PLANNING = "Approve", "Keep planning"
APPROVED_TEXT = "Plan approved — plan mode exited; carry out the plan starting with your next step."
TOOL = "exit_plan_mode"


def fold_plan_mode(events) -> bool:
    """The newest ``plan/mode`` event decides (read from the end: a long log is not walked)."""
    for event in reversed(events or ()):
        if event.get("type") == "plan/mode" and isinstance(event.get("data"), dict):
            return event["data"].get("active") is True
    return False


def _turn_open(events) -> bool:
    for event in reversed(events or ()):
        if event.get("type") in ("turn/start", "turn/end"):
            return event["type"] == "turn/start"
    return False


def plan_command(message) -> str | None:
    """``/plan`` … as the user typed it: "on", "off", or the text to keep; None when it is no command."""
    if not isinstance(message, dict) or (message.get("source") or {}).get("kind", "user") != "user":
        return None
    text = "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text").strip()
    head, _, rest = text.partition(" ")
    if head != "/plan":
        return None
    rest = rest.strip()
    return "off" if rest == "off" else (rest or "on")


class PlanMode:
    def __init__(self, section: str):
        self.section = section
        self.pending: dict[int, bool] = {}   # id(session) -> the mode wanted from the next step

    def active(self, session) -> bool:
        return self.pending.get(id(session), fold_plan_mode(getattr(session, "events", None)))

    def context_text(self, session) -> str | None:
        """The ``plan:policy`` runtime-context section, or None outside plan mode."""
        return self.section if self.active(session) else None

    def set(self, agent, active: bool) -> str:
        session = agent.session
        if self.active(session) == active:
            return "noop"
        if _turn_open(session.events):
            self.pending[id(session)] = active
            return "queued"
        self.pending.pop(id(session), None)
        agent.append("plan/mode", {"active": active})
        return "committed"

    def at_step(self, agent) -> None:
        wanted = self.pending.pop(id(agent.session), None)
        if wanted is not None and wanted != fold_plan_mode(agent.session.events):
            agent.append("plan/mode", {"active": wanted})

    def definition(self) -> Tool:
        return Tool(TOOL, "In plan mode only: show the user your complete plan (markdown, first line a # title) "
                    "for approval; approved, plan mode ends and you carry it out from the next step; otherwise "
                    "the user's feedback comes back and you revise it.", self.exit_plan_mode,
                    EXIT_PLAN_MODE_PARAMETERS, dsh_arguments=True)

    async def exit_plan_mode(self, args, run):
        agent = run.agent
        if not fold_plan_mode(getattr(getattr(agent, "session", None), "events", None)):
            return error_result(f"{TOOL} is only available in plan mode", "TOOL_FAILED")
        plan = args["plan"]
        if not re.match(r"^#\s+\S", plan.strip()):
            return error_result(f"{TOOL} requires a non-empty markdown plan starting with a # heading", "TOOL_FAILED")
        asker = getattr(agent, "ask_user", None)
        if asker is None:
            return error_result("no user-questions channel is available to review the plan; ask the user to "
                                "switch the session mode instead", "TOOL_FAILED")
        answer = await asker({"question": "Approve this plan and leave plan mode?", "detail": plan,
                              "options": [{"label": APPROVE, "description": "Leave plan mode; the plan is carried "
                                           "out from the next step."},
                                          {"label": KEEP_PLANNING, "description": "Stay in plan mode; feedback "
                                           "goes back to the model."}],
                              "allowFreeText": True})
        if isinstance(answer, dict) and answer.get("option") == APPROVE and not answer.get("text"):
            self.pending[id(agent.session)] = False
            return text_result(APPROVED_TEXT)
        feedback = answer.get("text", "").strip() if isinstance(answer, dict) and isinstance(answer.get("text"),
                                                                                             str) else ""
        return error_result("The user chose to keep planning; their feedback: " + feedback if feedback else
                            "The user chose to keep planning; revise the plan and present it again.", "TOOL_FAILED")


def apply(ctx, config):
    mode = PlanMode(config["section"])
    ctx.provide("planMode", mode)
    tool = mode.definition()
    ctx.tools.register(ctx, tool.name, tool, ctx.get("toolScope") or "global")

    async def pre_step(payload, next_):
        decision = await next_()
        agent = payload["agent"]
        if not isinstance(decision, dict) or decision.get("kind") != "enter":
            return decision
        keep = []
        for message in decision.get("messages") or []:
            command = plan_command(message)
            if command is None:
                keep.append(message)
                continue
            mode.pending[id(agent.session)] = command != "off"
            if command not in ("on", "off"):
                keep.append({**message, "content": [{"type": "text", "text": command}]})
        mode.at_step(agent)
        return decision if len(keep) == len(decision.get("messages") or []) and all(
            a is b for a, b in zip(keep, decision.get("messages") or [])) else {**decision, "messages": keep}
    ctx.on("agent/pre-step", pre_step)
