"""``@dshctl/subagent-tools``: the five model tools, configured as dsh's headless profile — ``subagent``
continuable on ``spawn``, ``subagent_fork`` one-shot on ``fork``, ``maxDepth`` 1 — plus ``list_agents``,
``send_message`` and ``interrupt_agent`` (``control: false`` leaves those three out)."""
from __future__ import annotations

AGENT_OPTIONS = {"type": "object", "additionalProperties": False, "properties": {
    "provider": {"type": "string"}, "model": {"type": "string"}, "maxTokens": {"type": "integer", "minimum": 1}}}
TOOL_FILTER = {"type": "object", "additionalProperties": False, "minProperties": 1, "properties": {
    "allow": {"type": "array", "items": {"type": "string"}}, "deny": {"type": "array", "items": {"type": "string"}}}}

name = "@dshctl/subagent-tools"
inject = ["tools", "subagents", "agents"]
schema = {"type": "object", "default": {}, "properties": {
    "maxDepth": {"type": "integer", "minimum": 0, "default": 1},
    "agentOptions": AGENT_OPTIONS,
    "persona": {"type": "string"},
    "toolFilter": TOOL_FILTER,
    "control": {"type": "boolean", "default": True},   # list_agents / send_message / interrupt_agent
}}


def apply(ctx, config):
    from .tools import DelegationTool, control_tools
    shared = {k: config.get(k) for k in ("maxDepth", "agentOptions", "persona", "toolFilter")}
    ctx.tools.register(ctx, "subagent", DelegationTool(
        ctx, {**shared, "provider": "spawn", "backgroundMode": "continuable"}).tool("subagent"))
    ctx.tools.register(ctx, "subagent_fork", DelegationTool(
        ctx, {**shared, "provider": "fork", "backgroundMode": "one-shot"}).tool("subagent_fork"))
    # off under Agent Teams, whose tools take these names (as dsh's team composition drops its control row)
    for tool in control_tools(ctx) if config["control"] else ():
        ctx.tools.register(ctx, tool.name, tool)
