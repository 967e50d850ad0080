"""``@dshctl/subagent-tools``: the five model tools, configured as dsh's headless profile — ``subagent``
continuable on ``spawn``, ``subagent_fork`` one-shot on ``fork``, ``maxDepth`` 1 — plus ``list_agents``,
``send_message`` and ``interrupt_agent``."""
from __future__ import annotations

_AGENT_OPTIONS = {"type": "object", "additionalProperties": False, "properties": {
    "provider": {"type": "string"}, "model": {"type": "string"}, "maxTokens": {"type": "integer", "minimum": 1}}}
_FILTER = {"type": "object", "additionalProperties": False, "minProperties": 1, "properties": {
    "allow": {"type": "array", "items": {"type": "string"}}, "deny": {"type": "array", "items": {"type": "string"}}}}

name = "@dshctl/subagent-tools"
inject = ["tools", "subagents", "agents"]
schema = {"type": "object", "default": {}, "properties": {
    "maxDepth": {"type": "integer", "minimum": 0, "default": 1},
    "agentOptions": _AGENT_OPTIONS,
    "persona": {"type": "string"},
    "toolFilter": _FILTER,
}}


def apply(ctx, config):
    from .tools import DelegationTool, control_tools
    shared = {k: config.get(k) for k in ("maxDepth", "agentOptions", "persona", "toolFilter")}
    ctx.tools.register(ctx, "subagent", DelegationTool(
        ctx, {**shared, "provider": "spawn", "backgroundMode": "continuable"}).tool("subagent"))
    ctx.tools.register(ctx, "subagent_fork", DelegationTool(
        ctx, {**shared, "provider": "fork", "backgroundMode": "one-shot"}).tool("subagent_fork"))
    for tool in control_tools(ctx):
        ctx.tools.register(ctx, tool.name, tool)
