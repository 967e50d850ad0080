"""The model's sub-agent tools, by dsh's names, parameters and result texts.

``subagent`` (provider ``spawn``, continuable: background by default, answering ``started subagent <id>``;
the result arrives later as the settlement notice) and ``subagent_fork`` (provider ``fork``, one-shot,
foreground by default, answering with the child's final text). A foreground call that does not complete
is an error naming the stop reason, with the child's partial text. ``list_agents`` lists continuable
children (``<id> [running|idle|ready] — <label>``, ``(no subagents)``), ``send_message`` queues a next turn
(``message queued as the next turn for subagent <id>``), ``interrupt_agent`` stops a child's current turn
(``interrupt requested for agent <id>``).
"""
from __future__ import annotations

from dshctl.agents.tools.definition import Tool, error_result, text_result

from . import outcome
from .child import SubagentDepthError
from .schemas import (CONTINUABLE_BACKGROUND, FORK_PROMPT, FRESH_PROMPT, INTERRUPT_AGENT_PARAMETERS,
                      LIST_AGENTS_PARAMETERS, ONE_SHOT_BACKGROUND, SEND_MESSAGE_PARAMETERS, SUBAGENT_FORK_PARAMETERS,
                      SUBAGENT_PARAMETERS, delegation_parameters)
from .service import SubagentError

FRESH = ("Delegate a self-contained task to a subagent (a separate agent working in its own context) for "
         "focused, independent work. Give it a complete, standalone prompt: it does not see this conversation.")
FORKED = ("Delegate a task to a subagent seeded with this conversation's completed turns (not the turn in "
          "flight); you receive its result, not its intermediate steps.")
_FAILURES = (SubagentError, SubagentDepthError, TypeError)


def _code(exc: Exception) -> str:
    return getattr(exc, "code", None) or ("SUBAGENT_DEPTH" if isinstance(exc, SubagentDepthError) else "SUBAGENT_FAILED")


class DelegationTool:
    def __init__(self, ctx, config: dict):
        self.ctx, self.config = ctx, config
        self.continuable = config.get("backgroundMode") == "continuable"
        self.background_enabled = config.get("enableRunInBackground", True) is not False

    def request(self, args: dict, run) -> dict:
        out = {"label": args["description"], "prompt": [{"type": "text", "text": args["prompt"]}],
               "parent": run.agent, "signal": run.abort, "toolCallId": run.call_id}
        for key in ("agentOptions", "persona", "toolFilter", "maxDepth"):
            if self.config.get(key) is not None:
                out[key] = self.config[key]
        return out

    async def execute(self, args, run):
        if run.agent is None or getattr(run.agent, "session", None) is None:
            return error_result("subagent tool requires a calling agent", "SUBAGENT_NO_PARENT")
        background = args.get("run_in_background")
        if not self.background_enabled and background is True:
            return error_result("run_in_background is disabled for this tool instance (enableRunInBackground: "
                                "false)", "BACKGROUND_DISABLED")
        background = self.continuable if background is None or not self.background_enabled else background is True
        request = self.request(args, run)
        subagents = self.ctx.subagents
        try:
            if background:
                # a one-shot tool's background call runs as a continuable child too: dshctl has no job
                # table for sub-agents, and the settlement notice is how a background result comes back
                started = await subagents.start_continuable({"provider": self.config["provider"],
                                                             "label": args["description"], "request": request})
                return text_result(f"started subagent {started['childId']}")
            subagent_run = await subagents.start(self.config["provider"], request)
        except _FAILURES as exc:
            return error_result(str(exc), _code(exc))
        try:
            result = await subagent_run.result
        finally:
            await subagent_run.dispose()
        if result["stopReason"] != "completed":
            message = outcome.failure_text(result)
            return error_result(message, "SUBAGENT_" + result["stopReason"].upper().replace("-", "_"))
        return text_result(outcome.text_of(result["output"]))

    def tool(self, name: str) -> Tool:
        fork = self.config["provider"] == "fork"
        if not self.background_enabled:
            parameters = delegation_parameters(FORK_PROMPT if fork else FRESH_PROMPT, None)
        elif self.continuable:
            parameters = SUBAGENT_PARAMETERS if not fork else delegation_parameters(FORK_PROMPT, CONTINUABLE_BACKGROUND)
        else:
            parameters = SUBAGENT_FORK_PARAMETERS if fork else delegation_parameters(FRESH_PROMPT, ONE_SHOT_BACKGROUND)
        return Tool(name, FORKED if fork else FRESH, self.execute, parameters, is_concurrency_safe=lambda _a: True)


def control_tools(ctx) -> list[Tool]:
    def list_agents(args, run):
        descendants = args.get("scope") == "descendants"
        rows = []

        def walk(parent_id: str, depth: int):
            for entry in ctx.subagents.list_children(parent_id):
                at = f" parent={parent_id} depth={depth}" if descendants else ""
                if entry["kind"] == "diagnostic":
                    rows.append(f"{entry['id']} [diagnostic: {entry['reason']}]{at}")
                elif entry["mode"] == "continuable":
                    live = ctx.agents.get(entry["id"])
                    status = "ready" if live is None else ("running" if live.status == "running" else "idle")
                    rows.append(f"{entry['id']} [{status}]{at} — {entry['label']}")
                if descendants and entry["kind"] == "child":
                    walk(entry["id"], depth + 1)
        walk(run.agent.id, 1)
        return text_result("\n".join(rows) if rows else "(no subagents)")

    async def send_message(args, run):
        try:
            await ctx.subagents.followup(run.agent, args["subagent_id"], [{"type": "text", "text": args["message"]}],
                                         {"source": {"kind": "coordinator", "form": "relay",
                                                     "senderSessionId": run.agent.id}})
        except _FAILURES as exc:
            return error_result(str(exc), _code(exc))
        return text_result(f"message queued as the next turn for subagent {args['subagent_id']}")

    def interrupt_agent(args, run):
        try:
            ctx.subagents.interrupt(args["agent_id"], {"kind": "ancestor", "agent": run.agent})
        except _FAILURES as exc:
            return error_result(str(exc), _code(exc))
        return text_result(f"interrupt requested for agent {args['agent_id']}")

    return [
        Tool("list_agents", "List your continuable background subagents by durable id, status and label.",
             list_agents, LIST_AGENTS_PARAMETERS, is_concurrency_safe=lambda _a: True),
        Tool("send_message", "Send a background subagent its next turn by its subagent id; returns on delivery.",
             send_message, SEND_MESSAGE_PARAMETERS),
        Tool("interrupt_agent", "Stop the current turn of a background agent you started (or one below it).",
             interrupt_agent, INTERRUPT_AGENT_PARAMETERS),
    ]
